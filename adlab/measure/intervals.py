"""The interval around a median, and when it is narrow enough to stop timing.

Every median a sweep reports comes with a bootstrap interval
(``median_interval``); the findings claim "A is faster than B" only where those
intervals are apart (``adlab.measure.findings``). How many repeats a point needs
depends on how its repeats scatter, so a fixed count is wrong both ways: a fast,
steady call is done after a few repeats and was given many, a noisy one needs
more. So repeats go on until the interval the findings use is narrow enough
(``settled``: its width at most ``INTERVAL_WIDTH`` of the median), never fewer than
the minimum (5 by default: the range of 5 repeats covers the true median 15
times in 16, as ``1 - 2 / 2**5`` says; 3 repeats would only cover it 3 times in
4), and never more than ``MAX_REPEATS`` or the point's budget. The stopping rule
looks at the interval's width, never at where it lies, so it cannot steer a
median towards any answer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

#: confidence of the interval around each median (``median_lo_s``, ``median_hi_s``)
CONFIDENCE = 0.95
#: bootstrap resamples for that interval (cheap: a few repeats each)
RESAMPLES = 2000
#: a point stops taking repeats once its median's interval is at most this wide,
#: relative to the median (0.1: the median known to about +-5%)
INTERVAL_WIDTH = 0.1
#: repeats at the most when the interval stays wider than ``INTERVAL_WIDTH`` (a noisy
#: machine): three times the default fewest
MAX_REPEATS = 15


def median_interval(
    samples: Sequence[float], confidence: float = CONFIDENCE, resamples: int = RESAMPLES
) -> tuple[float, float]:
    """A bootstrap interval of the median of ``samples`` (percentile method, seeded).

    The bounds are sample values (the lower and higher of the neighbouring
    quantiles), so the interval never claims more precision than the repeats
    have: with 5 repeats it is their range, with 7 it drops the extremes.
    Seeded, so the same samples always give the same interval.

    References:
        Efron & Tibshirani, An Introduction to the Bootstrap (1993), ch. 13.
    """
    a = np.asarray(samples, dtype=float)
    n = len(a)
    if n < 2:
        return float(a[0]), float(a[0])
    rng = np.random.default_rng(0)
    # np.median and np.quantile(method="lower"/"higher") by hand, the same numbers at a
    # third of the cost: a sweep asks after every other repeat of every point
    boot = np.sort(a[rng.integers(0, n, size=(resamples, n))], axis=1)
    mid = n // 2
    medians = boot[:, mid] if n % 2 else (boot[:, mid - 1] + boot[:, mid]) / 2
    medians.sort()
    tail = (1 - confidence) / 2
    lo = medians[math.floor((resamples - 1) * tail)]
    hi = medians[math.ceil((resamples - 1) * (1 - tail))]
    return float(lo), float(hi)


def relative_width(samples: Sequence[float]) -> float:
    """The width of the median's interval over the median (inf for no samples or a
    median of 0: nothing is known yet)."""
    if len(samples) == 0:
        return float("inf")
    median = float(np.median(samples))
    if not median > 0:
        return float("inf")
    lo, hi = median_interval(samples)
    return (hi - lo) / median


def settled(samples: Sequence[float], fewest: int, width: float | None = INTERVAL_WIDTH,
            most: int = MAX_REPEATS) -> bool:  # fmt: skip
    """Whether a point has repeats enough: at least ``fewest``, and then either its
    median's interval is at most ``width`` wide (relative to it), or it has ``most``.

    ``width`` None: exactly ``fewest`` repeats, whatever their spread (a fixed
    count, as ``timeit`` takes). ``most`` below ``fewest`` counts as ``fewest``.

    The interval is looked at every other repeat from ``fewest`` on (5, 7, 9, ...):
    each look is a bootstrap, about as long as a short repeat, and a loaded machine
    looks many times; an odd count's median is one repeat's own time.
    """
    n = len(samples)
    if n < fewest:
        return False
    if width is None or n >= max(most, fewest):
        return True
    if (n - fewest) % 2:
        return False
    return relative_width(samples) <= width
