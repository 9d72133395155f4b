"""embdebias sweep without a cluster: the configuration's errors, the points and their keys,
the store (resume after Ctrl-C, an error row), the table, the summary and the command."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pandas")

import embdebias  # noqa: E402
from embdebias.errors import EmbdebiasError  # noqa: E402
from embdebias.sweep import load_config, run, store  # noqa: E402
from embdebias.sweep.points import make_points  # noqa: E402
from embdebias.sweep.summary import COLUMNS, FIGURES, pareto_front  # noqa: E402

from synthetic import synthetic_embedding  # noqa: E402

SUITE = ["direct_bias", "weat", "similarity"]


@pytest.fixture(scope="module")
def emb_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("sweep") / "small"
    embdebias.save(synthetic_embedding(n_filler=300, dim=16), path)
    return str(path)


def config(emb_path, **extra):
    return {"embeddings": [{"path": emb_path, "label": "small", "order": 1}], "suite": SUITE, "bootstrap": 20,
            "methods": {"hard": {}, "soft": {"lam": [0.1, 1.0]}}, **extra}


def write_toml(tmp_path, text: str):
    path = tmp_path / "sweep.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("text, named", [
    ('colour = 1\n[[embeddings]]\npath = "glove-6b-50d"\n', "colour: unknown key"),
    ('[[embeddings]]\npath = "glove-6b-50d"\n[methods.fancy]\n', "methods.fancy: unknown method"),
    ('[[embeddings]]\npath = "glove-6b-50d"\n[methods.soft]\nlamda = [1.0]\n', "methods.soft"),
    ('[[embeddings]]\npath = "glove-6b-50d"\n[methods.soft]\nlam = []\n', "methods.soft: lam: is empty"),
    ('[[embeddings]]\npath = "glove-6b-50d"\n[methods.soft]\nlam = [-1.0]\n', "The 'lam' parameter of SoftDebias must be a float in the range"),
    ('attributes = ["nosuch"]\n[[embeddings]]\npath = "glove-6b-50d"\n', "unknown attribute 'nosuch'; bundled: gender"),
    ('attributes = ["bad.json"]\n[[embeddings]]\npath = "glove-6b-50d"\n', "attributes: attribute file"),
    ('[[embeddings]]\npath = "nowhere.bin"\n', "embeddings[0].path: no such file"),
    ('[[embeddings]]\npath = "runs/*.bin"\n', "embeddings[0].path: the glob"),
    ('[[embeddings]]\npath = "glove-6b-50d"\nyear = 1990\n', "embeddings[0].year: unknown key"),
    ('suite = ["wut"]\n[[embeddings]]\npath = "glove-6b-50d"\n', "suite: unknown metric 'wut'"),
    ('[[embeddings]]\npath = "glove-6b-50d"\n[methods.hard]\nsubspace = [1]\n', "methods.hard.subspace"),
    ("[[embeddings]\n", "not valid TOML"),
])
def test_bad_config_is_one_line_naming_the_key(tmp_path, text, named):
    with pytest.raises(EmbdebiasError) as info:
        load_config(write_toml(tmp_path, text))
    message = str(info.value)
    assert named in message and "\n" not in message
    assert message.startswith(str(tmp_path / "sweep.toml"))


def test_points_grid_and_keys(emb_path):
    cfg = load_config(config(emb_path, seeds=[0, 1]))
    points = make_points(cfg)
    # per seed: the baseline, hard, soft at two values of lambda
    assert [(p.method, p.params, p.seed) for p in points] == [
        ("none", {}, 0), ("hard", {}, 0), ("soft", {"lam": 0.1}, 0), ("soft", {"lam": 1.0}, 0),
        ("none", {}, 1), ("hard", {}, 1), ("soft", {"lam": 0.1}, 1), ("soft", {"lam": 1.0}, 1)]
    assert len({p.key for p in points}) == len(points)
    assert [p.key for p in make_points(cfg)] == [p.key for p in points]  # stable
    other = make_points(load_config(config(emb_path, seeds=[0, 1], bootstrap=21)))
    assert not {p.key for p in other} & {p.key for p in points}  # any input changes every key


def test_serial_sweep_table_summary_error_row_and_resume(emb_path, tmp_path, monkeypatch):
    broken = tmp_path / "broken.txt"
    broken.write_text("2 3\nhe 1 2\n", encoding="utf-8")
    cfg = config(emb_path)
    cfg["embeddings"].append({"path": str(broken), "label": "broken"})
    out = tmp_path / "out"

    # Ctrl-C after the second stored point (as in run_serial's loop): those two stay stored.
    real_write, calls = store.write_point, []

    def write_then_interrupt(out_dir, record):
        real_write(out_dir, record)
        calls.append(record["key"])
        if len(calls) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(run, "write_point", write_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        embdebias.sweep(cfg, out, serial=True, log=lambda *a: None)
    assert sorted(store.read_points(out)) == sorted(calls)
    monkeypatch.setattr(run, "write_point", real_write)

    said = []
    frame = embdebias.sweep(cfg, out, serial=True, log=said.append)
    assert "8 points: 2 already finished, 6 to run" in said[0]
    assert list(frame.columns) == COLUMNS
    per_point = frame.drop_duplicates("key")
    assert len(per_point) == 8
    failed = per_point[per_point["error"].notna()]
    assert sorted(failed["label"]) == ["broken"] * 4  # the broken file's points, and only they
    assert failed["metric"].isna().all() and "broken.txt" in failed["error"].iloc[0]
    good = frame[frame["label"] == "small"]
    direct = good[(good["metric"] == "direct_bias") & (good["statistic"] == "direct_bias_original")]
    by_method = dict(zip(direct["method"], direct["value"]))
    assert by_method["hard"] < 0.2 * by_method["none"]  # hard debias removes the planted direction
    assert (direct["ci_low"] <= direct["value"]).all() and direct["n_scored"].gt(0).all()
    assert set(json.loads(good["versions"].iloc[0])) >= {"embdebias", "numpy"}
    for name in ("sweep.parquet", "sweep.csv", "summary.md", *FIGURES):
        assert (out / name).stat().st_size > 0
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "## Failed points" in summary and "Kendall's tau" in summary

    # a third run finds every good point stored and runs only the failed ones again
    said.clear()
    again = embdebias.sweep(cfg, out, serial=True, log=said.append)
    assert "4 already finished, 4 to run" in said[0]
    assert again[again["label"] == "small"]["value"].equals(good["value"])


def test_pareto_front_per_embedding():
    pts = [{"label": "a", "bias_left": 0.5, "quality_kept": 0.9}, {"label": "a", "bias_left": 0.2, "quality_kept": 0.95},
           {"label": "a", "bias_left": 0.1, "quality_kept": 0.8}, {"label": "b", "bias_left": 0.9, "quality_kept": 0.5}]
    assert pareto_front(pts) == [pts[2], pts[1], pts[3]]


def test_command(emb_path, tmp_path, capsys):
    from embdebias.cli import main

    path = write_toml(tmp_path, f'suite = ["direct_bias"]\nbootstrap = 0\n[[embeddings]]\npath = "{emb_path}"\n'
                                '[methods.hard]\n')
    assert main(["sweep", str(path), "--out-dir", str(tmp_path / "o"), "--serial", "-q"]) == 0
    assert (tmp_path / "o" / "summary.md").exists() and len(store.read_points(tmp_path / "o")) == 2
    bad = write_toml(tmp_path, '[[embeddings]]\npath = "glove-6b-50d"\n[methods.soft]\nlam = "x"\n')
    assert main(["sweep", str(bad), "--out-dir", str(tmp_path / "o2")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "methods.soft" in err


def _heads(n_points=8, seed=0):
    """Headlines of ``n_points`` points by three bias metrics and one quality metric: ``ect``
    follows ``weat`` with noise, ``rnsb`` is independent, ``similarity`` (higher is better) falls
    as ``weat``'s bias falls."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    weat = rng.uniform(0, 1, n_points)
    values = {"weat": weat, "ect": weat + rng.normal(0, 0.15, n_points), "rnsb": rng.uniform(0, 1, n_points),
              "similarity": weat + rng.normal(0, 0.05, n_points)}
    return pd.DataFrame([{"key": f"p{i}", "metric": m, "fairer": "higher" if m == "similarity" else "lower",
                          "value": v[i]} for m, v in values.items() for i in range(n_points)])


def test_agreement_over_points_is_rankings_tau_with_seeded_point_intervals(monkeypatch):
    import numpy as np

    from embdebias.sweep import summary
    from embdebias.sweep.summary import agreement, rankings

    heads = _heads()
    ranks, tau = rankings(heads)
    agreed = agreement(ranks, n_boot=400)
    names = agreed["families"]
    assert names == list(tau.columns) and agreed["unit"] == "points" and len(agreed["columns"]) == 8
    got = np.array([[np.nan if v is None else v for v in row] for row in agreed["tau"]])
    np.testing.assert_allclose(got, tau.to_numpy(dtype=float), atol=1e-12)  # scipy's tau-b, fairer first
    w, e, s = names.index("weat"), names.index("ect"), names.index("similarity")
    assert agreed["tau"][w][e] > 0.5 and agreed["tau"][w][s] < -0.5  # less bias, less quality: opposite ranks
    for i in range(len(names)):
        assert agreed["ci_low"][i][i] is None  # the diagonal: 1, no interval
        for j in range(len(names)):
            if i != j:
                assert agreed["ci_low"][i][j] <= agreed["tau"][i][j] <= agreed["ci_high"][i][j]
                assert agreed["ci_low"][i][j] == agreed["ci_low"][j][i]
    assert agreement(ranks, n_boot=400) == agreed  # seeded
    assert agreement(ranks, n_boot=400, random_state=1)["ci_low"] != agreed["ci_low"]
    # a pair's interval does not depend on the other metrics in the sweep, nor on the block size
    fewer = agreement(ranks[["weat", "ect"]], n_boot=400)
    assert fewer["ci_low"][0][1] == agreed["ci_low"][w][e] and fewer["ci_high"][0][1] == agreed["ci_high"][w][e]
    monkeypatch.setattr(summary, "AGREEMENT_BLOCK", 50)
    assert agreement(ranks, n_boot=400) == agreed
    # a metric that scored only some points is compared over the points both scored
    partial = ranks.copy()
    partial.loc[["p0", "p1"], "rnsb"] = np.nan
    r = agreement(partial, n_boot=100)["tau"][names.index("rnsb")][w]
    both = partial[["rnsb", "weat"]].dropna()
    from scipy.stats import kendalltau
    assert r == pytest.approx(kendalltau(both["rnsb"], both["weat"]).statistic, abs=1e-12)
    assert agreement(ranks.iloc[:2]) is None and agreement(ranks[["weat"]]) is None


def test_summary_draws_the_agreement_heat_map_and_its_table(tmp_path):
    import pandas as pd

    from embdebias.sweep.summary import agreement, plot_agreement, rankings, render

    heads = _heads()
    ranks, _ = rankings(heads)
    agreed = agreement(ranks, n_boot=200)
    plot_agreement(agreed, tmp_path / "agreement.png")
    plot_agreement(None, tmp_path / "none.png")
    assert (tmp_path / "agreement.png").stat().st_size > 5000 and (tmp_path / "none.png").stat().st_size > 1000
    frame = pd.DataFrame({"key": ["p0"], "embedding": ["e"], "label": ["e"], "order": [None], "limit": [None],
                          "method": ["none"], "error": [None]})
    heads = heads.assign(label="e", method="none", parameters="{}", seed=0)
    text = render(frame, heads, [], [], ranks, agreed, None, None)
    assert "![agreement between the metrics](agreement.png)" in text
    w, e = agreed["families"].index("weat"), agreed["families"].index("ect")
    assert f"[{agreed['ci_low'][w][e]:.3g}, {agreed['ci_high'][w][e]:.3g}]" in text


def test_tau_of_each_resample_equals_tau_b_of_the_drawn_points():
    import numpy as np

    from embdebias.metrics.trust import kendall_tau_b
    from embdebias.sweep.summary import _tau_draws

    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 5, 12).astype(float), rng.integers(0, 4, 12).astype(float)  # many ties
    idx = np.random.default_rng(9).integers(0, 12, size=(300, 12))
    direct = kendall_tau_b(x[idx], y[idx])  # every pair of every resample, one by one
    direct = direct[np.isfinite(direct)]
    got = _tau_draws(x, y, 300, np.random.default_rng(9))
    assert got.size == direct.size > 250
    np.testing.assert_allclose(got, direct, rtol=0, atol=1e-15)
