"""``adlab report``: one HTML file of a saved run, or of two compared, that needs nothing
from outside: BokehJS inlined, no script or stylesheet fetched; the table, findings,
machine and versions and the model's source in it. (The browser test opens it.)"""

from __future__ import annotations

import re
from pathlib import Path

import adlab
from adlab import Record
from adlab.cli import main


def rec(label: str, n: int, t: float, sweep: str, **kw) -> Record:
    kw.setdefault("mode", label)
    return Record(model="normal_logpdf", n=n, label=label, scheme=None, jit=True,
                  precision="float64", backend="jax", median_s=t, median_lo_s=t * 0.98,
                  median_hi_s=t * 1.02, floor_s=5e-6, error=1e-15,
                  env={"noise": 0.05, "sweep": sweep}, **kw)  # fmt: skip


def saved(tmp_path, name: str, slow: float = 1.0) -> str:
    records = [rec(label, n, t * (slow if label == "forward" else 1), name)
               for n in (10, 100, 1000)
               for label, t in (("primal", 5e-6 + n * 1e-9), ("reverse", 6e-6 + n * 2e-8),
                                ("forward", 5e-6 * n))]  # fmt: skip
    return str(adlab.save(records, tmp_path / f"{name}.json"))


def make_reports(tmp_path) -> tuple[str, str]:
    """A report of one run and one of a run against a slower base (for the browser test)."""
    base, new = saved(tmp_path, "base", slow=2.0), saved(tmp_path, "new")
    one, two = tmp_path / "one.html", tmp_path / "two.html"
    assert main(["report", new, "-o", str(one)]) == 0
    assert main(["report", new, "--against", base, "-o", str(two)]) == 0
    return str(one), str(two)


def test_a_report_holds_everything_and_fetches_nothing(tmp_path):
    one, two = make_reports(tmp_path)
    text = Path(one).read_text(encoding="utf-8")
    assert not re.search(r"<(script|link)[^>]+(src|href)=", text)  # all inline
    assert "Bokeh" in text and "adlab-time-plot" in text
    for part in ("Table", "Findings", "Machine and versions", "Model: normal_logpdf",
                 "def f(", "fastest derivative at n=1000: reverse"):  # fmt: skip
        assert part in text, part
    both = Path(two).read_text(encoding="utf-8")
    assert "Dashed: " in both and "base.json" in both and "new.json" in both
    assert "faster 2x" in both  # forward, new against base
