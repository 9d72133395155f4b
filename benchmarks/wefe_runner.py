"""Run one WEFE 1.0.1 debiaser on vectors given as .npy files (executed in a scratch venv, not embdebias's).

WEFE pins numpy < 2, so ``bench_debiasers.py`` runs this file with another Python
(``/tmp/wefe/bin/python``) in a subprocess. Usage::

    python wefe_runner.py METHOD DIR

``DIR`` holds ``vectors.npy`` (n x d float32), ``words.txt`` (one word a line) and
``args.json`` (the method's word lists, and optionally ``repeat``: how many times to
time the fit and transform). The result goes to ``DIR/out.npy`` and the timing (the
best, and every one) to ``DIR/out.json``. Nothing of embdebias is imported here.
"""

import json
import sys
import time
from pathlib import Path

import numpy as np
from gensim.models import KeyedVectors
from wefe.word_embedding_model import WordEmbeddingModel


def run(method: str, model, args: dict):
    """``(output model, fitted estimator)`` of WEFE's ``method``."""
    if method == "hsr":
        from wefe.debias.half_sibling_regression import HalfSiblingRegression

        est = HalfSiblingRegression()
        return est.fit(model, definitional_words=args["definitional_words"], alpha=60).transform(model, copy=True), est
    if method == "double-hard":
        from wefe.debias.double_hard_debias import DoubleHardDebias

        est = DoubleHardDebias(n_words=args.get("n_words", 1000), n_components=args.get("n_components", 4))
        est.fit(model, definitional_pairs=args["definitional_pairs"], bias_representation=["he", "she"])
        return est.transform(model, ignore=args.get("ignore", []), copy=True), est
    if method == "multiclass-hard":
        from wefe.debias.multiclass_hard_debias import MulticlassHardDebias

        est = MulticlassHardDebias(pca_args={"n_components": args["n_components"]})
        est.fit(model, definitional_sets=args["definitional_sets"], equalize_sets=args["equalize_sets"])
        return est.transform(model, target=args["target"], ignore=args["ignore"], copy=False), est
    if method == "ran":
        from wefe.debias.repulsion_attraction_neutralization import RepulsionAttractionNeutralization

        est = RepulsionAttractionNeutralization().fit(model, definitional_pairs=args["definitional_pairs"])
        return est.transform(model, target=args["target"], copy=True), est
    raise SystemExit(f"unknown method {method}")


def main(method: str, directory: str) -> None:
    d = Path(directory)
    vectors = np.load(d / "vectors.npy")
    words = (d / "words.txt").read_text(encoding="utf-8").split("\n")
    args = json.loads((d / "args.json").read_text(encoding="utf-8"))
    kv = KeyedVectors(vectors.shape[1])
    kv.add_vectors(words, vectors)
    model = WordEmbeddingModel(kv, "glove")
    # "repeat" (default 1) times the fit and transform that many times (methods that copy the model)
    times = []
    for _ in range(int(args.get("repeat", 1))):
        t0 = time.perf_counter()
        out, est = run(method, model, args)
        times.append(time.perf_counter() - t0)
    seconds = min(times)
    result = np.stack([out.wv[w] for w in words]).astype(np.float32)
    np.save(d / "out.npy", result)
    info = {"seconds": seconds, "all_seconds": times}
    if method == "double-hard":
        info["targets"] = sorted(getattr(est, "target_words", None) or [])
    if method == "multiclass-hard":
        info["components"] = np.asarray(est.bias_subspace_, dtype=np.float64).tolist()
    (d / "out.json").write_text(json.dumps(info), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
