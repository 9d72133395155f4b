"""No command aborts at interpreter exit: ``embdebias info`` on a text file exits 0 every time.

pyarrow's CSV reader threads could free their input after ``read_csv`` returned; over a
Python buffer that took the GIL from a native thread, and at interpreter exit Python
stopped that thread inside C++ frames: SIGABRT ("terminate called without an active
exception", exit 134) in about 2 runs of 60. The reader now hands pyarrow a buffer it
owns (``embdebias.io.text._arrow_owned``).
"""

import subprocess
import sys

import numpy as np

from embdebias.embedding import Embedding
from embdebias.io import save

RUNS = 60


def test_info_on_a_text_file_exits_0_every_time(tmp_path):
    rng = np.random.default_rng(0)
    emb = Embedding([f"w{i}" for i in range(5_000)], rng.standard_normal((5_000, 50)).astype(np.float32))
    path = tmp_path / "e.txt"
    save(emb, path, format="word2vec-text")
    failures = []
    for run in range(RUNS):
        done = subprocess.run([sys.executable, "-m", "embdebias", "info", str(path)], capture_output=True,
                              text=True, timeout=300)
        if done.returncode != 0 or "terminate called" in done.stderr or "5000" not in done.stdout:
            failures.append((run, done.returncode, done.stderr[-300:]))
    assert not failures, failures
