"""Parameter rules shared by the Python API and the command line.

One :class:`Rule` per kind of parameter (a seed, a count, a fraction, a weight, ...).
The API checks a value with ``rule.check(value, name)``, which raises
:class:`~embdebias.errors.EmbdebiasError` ("lam must be a finite number >= 0, got -1");
argparse converts and checks a command-line string with ``type=rule.parse``, which
says the same ("argument --lambda: must be a finite number >= 0, got '-1'").
"""

from __future__ import annotations

import argparse
import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Callable

from .errors import EmbdebiasError


@dataclass(frozen=True)
class Rule:
    """What a parameter accepts.

    Attributes
    ----------
    kind : type
        ``int`` (integers only: a bool or a float is refused) or ``float`` (any real
        number, integers included; the ``test`` decides about nan and infinities).
    test : callable
        ``test(value) -> bool`` on a value of ``kind``.
    expected : str
        What the value must be, completing "``name`` must be ...".
    words : dict
        Command-line words with a meaning of their own ("none", "all"), and the value each stands for.
    """

    kind: type
    test: Callable[[Any], bool]
    expected: str
    words: dict = field(default_factory=dict)

    def check(self, value, name: str):
        """``value`` if it satisfies the rule; else EmbdebiasError naming ``name`` and what was expected."""
        if value in self.words.values() and (value is None or isinstance(value, str)):
            return value
        if not self._typed(value) or not self.test(value):
            raise EmbdebiasError(f"{name} must be {self.expected}, got {value!r}")
        return value

    def _typed(self, value) -> bool:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return False
        return isinstance(value, numbers.Integral if self.kind is int else numbers.Real)

    def convert(self, text: str):
        """argparse ``type`` of a parameter an estimator validates itself: ``text`` as a value of
        :attr:`kind` (or its word), not yet checked against the range (the estimator's
        ``_parameter_constraints`` say that, in scikit-learn's words, wherever it is given)."""
        if text.lower() in self.words:
            return self.words[text.lower()]
        try:
            return self.kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {'an integer' if self.kind is int else 'a number'}, "
                                             f"got {text!r}") from None

    def parse(self, text: str):
        """argparse ``type``: the value ``text`` stands for, checked (ArgumentTypeError if bad)."""
        if text.lower() in self.words:
            return self.words[text.lower()]
        try:
            value = self.kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {self.expected}, got {text!r}") from None
        try:
            self.check(value, "value")
        except EmbdebiasError:
            raise argparse.ArgumentTypeError(f"must be {self.expected}, got {text!r}") from None
        return value



def at_least(least: int) -> Rule:
    """An integer >= ``least`` (counts, sizes)."""
    return Rule(int, lambda v: v >= least, f"an integer >= {least}")


#: A seed of numpy's generators.
SEED = Rule(int, lambda v: 0 <= v < 2**32, "an integer in [0, 2**32)")
#: A count that may be zero.
COUNT = at_least(0)
#: A count of at least one (sizes, dimensions, limits).
POSITIVE = at_least(1)
#: A finite number >= 0 (rates, weights such as soft debias's lambda).
NONNEGATIVE = Rule(float, lambda v: math.isfinite(v) and v >= 0, "a finite number >= 0")
#: A fraction in [0, 1].
FRACTION = Rule(float, lambda v: 0 <= v <= 1, "a number in [0, 1]")
#: A share in [0, 1): the smallest share of bias removed that counts as fairer.
SHARE = Rule(float, lambda v: 0 <= v < 1, "a number in [0, 1)")
#: A target precision in (0, 1], or none (the SVM's own rule).
PRECISION_TARGET = Rule(float, lambda v: 0 < v <= 1, "a number in (0, 1] or none", {"none": None})
#: How many of the most frequent words to label: a count, "n_train" or "all".
MAX_RANK = Rule(int, lambda v: v >= 1, "an integer >= 1, n_train or all (None in Python)",
                {"n_train": "n_train", "all": None})


def argtype(convert: Callable[[str], Any]) -> Callable[[str], Any]:
    """An argparse ``type`` from an API conversion: its EmbdebiasError becomes argparse's usage error."""
    def parse(text: str):
        try:
            return convert(text)
        except EmbdebiasError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def check_choice(value, choices, name: str):
    """``value`` if it is one of ``choices``; else EmbdebiasError naming them."""
    if value not in choices:
        raise EmbdebiasError(f"{name} must be one of {', '.join(map(str, choices))}; got {value!r}")
    return value
