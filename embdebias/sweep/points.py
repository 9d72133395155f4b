"""The points of a sweep: embedding x attribute x seed x (baseline, and every method x its grid).

Each point is one task (fit, evaluate, optionally save), keyed by a hash of everything its
result depends on, the way ``embdebias run`` keys its resume steps
(:func:`embdebias.pipeline.state.key` over :func:`~embdebias.pipeline.run.input_identity`):
an edited input file, another setting or another embdebias version gives a new key, so
a re-run recomputes exactly the points whose inputs changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import __version__
from ..pipeline.run import input_identity
from ..pipeline.state import key
from .config import BASELINE, EmbeddingSpec, SweepConfig


@dataclass(frozen=True)
class Point:
    """One task of a sweep (everything a worker needs; picklable)."""

    embedding: EmbeddingSpec
    attribute: str
    method: str
    params: dict
    seed: int
    suite: tuple
    bootstrap: int
    limit: int | None
    lists: str
    save_dir: str | None = None
    key: str = field(default="", compare=False)

    def describe(self) -> str:
        params = ", ".join(f"{k}={v}" for k, v in self.params.items())
        return f"{self.embedding.label} {self.attribute} {self.method}({params}) seed={self.seed}"


def point_key(point: Point, identity: dict) -> str:
    """The hash of a point's inputs (its result is reused while it holds)."""
    return key(identity, point.limit, point.attribute, point.method, point.params, point.seed, list(point.suite),
               point.bootstrap, point.lists, point.save_dir is not None, __version__,
               *_attribute_file(point.attribute, point.lists))


def _attribute_file(attribute: str, lists: str) -> list:
    """The fingerprint of a user's attribute file's words (an edited file, or a list file it names,
    is a new point); none for a bundled name."""
    from pathlib import Path

    from ..data.attributes import load_attribute

    path = Path(attribute)
    return [load_attribute(path, lists).fingerprint()] if path.is_absolute() and path.is_file() else []


def make_points(config: SweepConfig, save_dir: str | None = None) -> list[Point]:
    """Every point of ``config``, embeddings first (a worker's consecutive tasks share one), each keyed."""
    points = []
    for emb in config.embeddings:
        identity = input_identity(emb.path)
        for attribute in config.attributes:
            for seed in config.seeds:
                runs = [(BASELINE, {})] + [(m, params) for m in config.methods for params in config.grid(m)]
                for method, params in runs:
                    p = Point(emb, attribute, method, params, seed, tuple(config.suite), config.bootstrap,
                              emb.limit or config.limit, config.lists, save_dir if method in config.save else None)
                    points.append(_keyed(p, identity))
    return points


def _keyed(point: Point, identity: dict) -> Point:
    object.__setattr__(point, "key", point_key(point, identity))
    return point
