"""Quick mode: the same tutorial, smaller sizes.

Setting ``ADLAB_QUICK=1`` in the environment makes every tutorial notebook
run top to bottom in about a minute on a 2-core machine (the tests run them
so). Only the sizes change: the cells, the modes and the way each point is
timed stay the same, so a quick run shows the same findings on fewer points.
"""

from __future__ import annotations

import os
from typing import TypeVar

T = TypeVar("T")

#: the environment variable that turns quick mode on
QUICK_ENV = "ADLAB_QUICK"
_OFF = ("", "0", "false", "no", "off")


def quick() -> bool:
    """True when ``ADLAB_QUICK`` is set to anything but "", 0, false, no or off."""
    return os.environ.get(QUICK_ENV, "").strip().lower() not in _OFF


def pick(full: T, quick_value: T) -> T:
    """``quick_value`` in quick mode, else ``full``: e.g. ``pick((1, 10, 100, 1000), (1, 10))``."""
    return quick_value if quick() else full
