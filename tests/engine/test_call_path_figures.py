"""The README's overhead figures were measured at the call path being submitted.

The prepared call is the hot path every timing rests on; its overhead goals (README,
"Benchmarks") held once and came back unnoticed after a change to it (issue 31). So each
overhead row of the README names the digest of the call path's code it was measured at
(``benchmarks/call_path.py``, printed by ``engine_overhead.py`` and ``framework_overhead.py``),
and this fails when the code has moved on: re-run both benchmarks on a quiet machine and put
their figures and the new digest in the README. No time is asserted here.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _digest() -> str:
    spec = importlib.util.spec_from_file_location("call_path", ROOT / "benchmarks" / "call_path.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.digest()


def test_the_readmes_overhead_figures_name_the_call_path_they_were_measured_at():
    readme = (ROOT / "README.md").read_text()
    heads = ("| `engine_overhead.py", "| `framework_overhead.py")
    rows = [line for line in readme.splitlines() if line.startswith(heads)]
    assert len(rows) >= 3, "the Benchmarks table's overhead rows are missing"
    now = _digest()
    for row in rows:
        quoted = re.findall(r"call path `([0-9a-f]{12})`", row)
        assert quoted == [now], (
            f"the call path changed ({quoted} in the README, {now} now): re-run "
            "benchmarks/engine_overhead.py (both tables) and benchmarks/framework_overhead.py "
            f"on a quiet machine and put their figures in the README, with `{now}`: {row[:80]}"
        )
