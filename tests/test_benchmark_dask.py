"""The erasure benchmark on a local Dask cluster gives the serial run's table (slow: worker processes)."""

import pandas as pd
import pytest
from test_benchmark import planted_embedding

from embdebias.benchmark import erasure_benchmark

pytest.importorskip("distributed")


def test_dask_gives_the_serial_table():
    emb = planted_embedding()
    serial = erasure_benchmark(emb, methods="orth", seeds=2, quality=False)
    lines = []
    on_dask = erasure_benchmark(emb, methods="orth", seeds=2, quality=False, dask=True, workers=2, log=lines.append)
    cols = ["method", "linear", "rbf", "mlp", "v_measure", "certificate", "distortion"]
    pd.testing.assert_frame_equal(on_dask.summary[cols], serial.summary[cols])
    assert any("local Dask cluster: 2 worker" in line for line in lines)
