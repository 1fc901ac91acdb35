"""How numbers are written: durations and sizes for people, non-finite floats for JSON.

One home each, so that every table, message and file says "12.3 us" and "7.6 MB"
the same way (and reads "4GB" back: ``parse_bytes``). What a browser shows (a notebook's
HTML, the Lab) says "12.3 \u00b5s" (``for_browser``); text for a terminal or a file keeps
ASCII, which any console prints.
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


#: decimal units, as the issue asked for them (KB, MB, GB): 1 KB = 1000 bytes, as a disk's
#: or a cloud machine's memory is sold; ``parse_bytes`` also reads the binary KiB .. TiB
BYTE_UNITS = (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3))
_BINARY_UNITS = (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))


def human_bytes(b: float | None) -> str:
    """A size in decimal units, 1 KB = 1000 bytes: '512 B', '7.8 KB', '7.6 MB', '3.2 GB';
    '-' for None or a non-finite size."""
    if b is None or not math.isfinite(b):
        return "-"
    for unit, scale in BYTE_UNITS:
        if abs(b) >= scale:
            return f"{b / scale:.3g} {unit}"
    return f"{b:.0f} B"


_SIZE = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*")


def parse_bytes(value: str | float) -> float:
    """A size given as bytes (a number) or as text: '4GB', '512MB', '1.5 GB', '2 GiB',
    '100000'. Decimal units as ``human_bytes`` writes them (1 KB = 1000 B; case does not
    matter), binary ones (KiB .. TiB, 1 KiB = 1024 B) as named. Raises ValueError for
    anything else, or a size that is not positive."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number, scale = float(value), 1.0
    else:
        match = _SIZE.fullmatch(str(value))
        units = {"": 1.0, "b": 1.0, **{u.lower(): float(s) for u, s in BYTE_UNITS + _BINARY_UNITS}}
        if match is None or match.group(2).lower() not in units:
            raise ValueError(
                f"a size is bytes or a number with a unit (B, KB, MB, GB, TB; KiB .. TiB), "
                f"e.g. '4GB' or '512 MB'; got {value!r}"
            )
        number, scale = float(match.group(1)), units[match.group(2).lower()]
    if not (number > 0 and math.isfinite(number)):
        raise ValueError(f"a size must be positive, got {value!r}")
    return number * scale


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
