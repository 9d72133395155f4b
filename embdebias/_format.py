"""How a scalar reads in the report: one helper for the debiasers' report lines and the run's report."""

from __future__ import annotations


def format_scalar(value) -> str:
    """A number or word as the report shows it (floats to 4 significant digits).

    Examples
    --------
    >>> format_scalar(0.123456), format_scalar(3), format_scalar("auto")
    ('0.1235', '3', 'auto')
    """
    return f"{value:.4g}" if isinstance(value, float) else str(value)
