"""SVM expansion of the gender-specific seed list on GloVe 6B 50d: what it adds.

Not a speed benchmark first: for every setting it prints the threshold chosen by
cross-validation, the held-out precision / recall / F1 at that threshold, how many
words are added among the training words and in the whole vocabulary (the
``max_rank`` question), how many of the additions are English stop words (a crude,
objective junk count: scikit-learn's ``ENGLISH_STOP_WORDS``), the time, and the first
added words, to be read.  The first setting is the defaults of
:func:`embdebias.debias.expand.expand_gender_specific`.

Usage::

    python benchmarks/bench_expand.py                         # default seed list
    python benchmarks/bench_expand.py --seeds gender_specific_seed.json --grid
    python benchmarks/bench_expand.py --show 50 --random-states 0 1 2 3 4

``--seeds`` takes a word-list file or a JSON list of words (as published by
Bolukbasi et al.); each setting is run with ``max_rank=None`` and its additions are
split by rank, which is the same classifier and threshold as ``max_rank="n_train"``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
import warnings
from pathlib import Path


HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from embdebias.debias.expand import ExpansionWarning, expand_gender_specific  # noqa: E402


def read_seeds(path):
    """A JSON list of words, or anything :func:`embdebias.wordlists.resolve_words` takes."""
    if path is None:
        return None
    if str(path).endswith(".json"):
        return json.loads(Path(path).read_text(encoding="utf-8"))
    return str(path)


def measure(emb, seeds, *, n_train=50_000, target_precision=0.8, C=1.0, class_weight=None,
            random_state=0, show=0) -> dict:
    """One setting: the whole vocabulary labelled, additions split at ``n_train``."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExpansionWarning)
        res = expand_gender_specific(emb, seeds, n_train=n_train, target_precision=target_precision,
                                     max_rank=None, C=C, class_weight=class_weight,
                                     random_state=random_state)
    seconds = time.perf_counter() - t0
    ranks = emb.words.rows(res.added)
    within = [w for w, r in zip(res.added, ranks) if r < res.n_train]
    return {"n_train": res.n_train, "target": target_precision, "C": C,
            "class_weight": class_weight, "random_state": random_state,
            "seeds_in_training": res.seed_in_training, "threshold": res.threshold,
            "precision": res.cv_precision, "recall": res.cv_recall, "f1": res.cv_f1,
            "best_precision": res.cv_best_precision,
            "added_within_n_train": len(within), "added_whole_vocab": len(res.added),
            "stop_within": sum(w in ENGLISH_STOP_WORDS for w in within),
            "stop_whole": sum(w in ENGLISH_STOP_WORDS for w in res.added),
            "seconds": seconds, "detail_s": dict(res.seconds),
            "first_within": within[:show],
            "first_beyond": [w for w, r in zip(res.added, ranks) if r >= res.n_train][:show]}


def _fmt(v, spec=".3f"):
    return "-" if v is None else format(v, spec)


def print_row(row: dict, show: int) -> None:
    print(f"n_train={row['n_train']:>6} target={row['target']} C={row['C']:<5} "
          f"class_weight={str(row['class_weight']):<8} rs={row['random_state']} "
          f"seeds={row['seeds_in_training']} | threshold={_fmt(row['threshold'], '.4f')} "
          f"P={_fmt(row['precision'])} R={_fmt(row['recall'])} F1={_fmt(row['f1'])} "
          f"(best P {_fmt(row['best_precision'])}) | added: {row['added_within_n_train']} "
          f"within n_train ({row['stop_within']} stop words), {row['added_whole_vocab']} in the "
          f"vocabulary ({row['stop_whole']} stop words) | {row['seconds']:.1f} s", flush=True)
    if show:
        print("    within n_train:", ", ".join(row["first_within"]) or "-")
        print("    beyond n_train:", ", ".join(row["first_beyond"]) or "-", flush=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", help="seed list: word-list file or JSON list (default: bundled)")
    p.add_argument("--grid", action="store_true",
                   help="also n_train 10k/20k/50k x C 0.1/1 x class_weight None/balanced x "
                        "target 0.6/0.7/0.8/0.9")
    p.add_argument("--random-states", type=int, nargs="+", default=[0])
    p.add_argument("--show", type=int, default=20, help="added words printed per setting")
    p.add_argument("--json", help="write the rows to this JSON file")
    args = p.parse_args(argv)

    import embdebias

    emb = embdebias.load()
    seeds = read_seeds(args.seeds)
    settings = [{}]
    if args.grid:
        settings += [dict(n_train=n, C=c, class_weight=cw, target_precision=t)
                     for n, c, cw, t in itertools.product((10_000, 20_000, 50_000), (0.1, 1.0),
                                                          (None, "balanced"), (0.6, 0.7, 0.8, 0.9))]
    rows = []
    for setting, rs in itertools.product(settings, args.random_states):
        row = measure(emb, seeds, random_state=rs, show=args.show, **setting)
        print_row(row, args.show)
        rows.append(row)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
