"""How numbers are written: durations and sizes for people, non-finite floats for JSON.

One home each, so that every table, message and file says "12.3 us" and "7.6 MiB"
the same way. What a browser shows (a notebook's HTML, the Lab) says "12.3 \u00b5s"
(``for_browser``); text for a terminal or a file keeps ASCII, which any console prints.
"""

from __future__ import annotations

import math
import re
from typing import Any


def seconds(s: float | None) -> str:
    """A duration with three significant digits: '12.3 us', '4.56 ms', '2.04 s', '-'."""
    if s is None or not math.isfinite(s):
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if abs(s) >= scale or unit == "ns":
            return f"{s / scale:.3g} {unit}"
    raise AssertionError  # pragma: no cover


_MICRO = re.compile(r"(?<=\d )us\b")


def for_browser(text: str) -> str:
    """``text`` as a browser shows it: microseconds with the micro sign, '5.75 \u00b5s'."""
    return _MICRO.sub("\u00b5s", text)


def ratio(x: float | None) -> str:
    """A ratio of two times: '0.83x', '8.6x', '42x'; '' when there is none."""
    if x is None or not math.isfinite(x):
        return ""
    return f"{x:.2g}x" if x < 10 else f"{x:.0f}x"


def error_text(x: float | None) -> str:
    """A relative error in two significant digits: '3.2e-08', '0' when exact, '-' for none."""
    if x is None:
        return "-"
    return "0" if x == 0 else f"{x:.1e}"


def human_bytes(b: float) -> str:
    """A size in powers of 1024, named as such: '512 B', '7.8 KiB', '7.6 MiB', '-'."""
    if not math.isfinite(b):
        return "-"
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(b) >= scale:
            return f"{b / scale:.3g} {unit}"
    return f"{b:.0f} B"


def jsonable(value: Any) -> Any:
    """``value`` with every non-finite float written as a string ('inf', '-inf', 'nan').

    JSON has no inf or nan; strings keep which one it was, and ``float()`` reads
    them back (``null`` would not say whether an error was infinite or missing).
    """
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value
