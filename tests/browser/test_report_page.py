"""``adlab report``'s HTML opened in headless Chromium from a ``file://`` URL, no server:
its plots draw (canvases, BokehJS's documents), and no request leaves the page.

One page, two reports in turn: a run alone, then a run against another (dashed over it).
"""

from __future__ import annotations

import adlab
from adlab import Record
from adlab.cli import main


def rec(label: str, n: int, t: float, sweep: str) -> Record:
    return Record(model="normal_logpdf", mode=label, n=n, label=label, scheme=None, jit=True,
                  precision="float64", backend="jax", median_s=t, median_lo_s=t * 0.98,
                  median_hi_s=t * 1.02, floor_s=5e-6, error=1e-15, peak_bytes=8.0 * n,
                  env={"noise": 0.05, "sweep": sweep})  # fmt: skip


def saved(tmp_path, name: str, slow: float) -> str:
    records = [rec(label, n, t * (slow if label == "forward" else 1), name)
               for n in (10, 100, 1000)
               for label, t in (("primal", 5e-6 + n * 1e-9), ("reverse", 6e-6 + n * 2e-8),
                                ("forward", 5e-6 * n))]  # fmt: skip
    return str(adlab.save(records, tmp_path / f"{name}.json"))


#: what BokehJS drew: its documents, the visible figures, their dashed lines (Bokeh's
#: "dashed" is [6]) and legend entries
DRAWN = """() => {
  const docs = (window.Bokeh && window.Bokeh.documents) || [];
  const views = [...(window.Bokeh ? window.Bokeh.index.all_views() : [])];
  const figures = views.filter(v => v.model.type === "Figure" && v.model.visible);
  const panels = f => ["center", "below", "right", "left", "above"].flatMap(k => f.model[k]);
  return {docs: docs.length, figures: figures.length,
          titles: figures.map(f => f.model.title && f.model.title.text),
          dashed: figures.reduce((k, f) => k + f.model.renderers.filter(
              r => r.glyph && JSON.stringify(r.glyph.line_dash) === '{"value":[6]}').length, 0),
          legend: figures.flatMap(f => panels(f).filter(c => c.type === "Legend")
              .flatMap(l => l.items.map(i => i.label && (i.label.value ?? i.label))))
              .filter(x => typeof x === "string")};
}"""


def test_a_report_opens_from_a_file_and_draws_offline(tmp_path, browser_page, screenshots):
    page, console = browser_page
    base, new = saved(tmp_path, "base", 2.0), saved(tmp_path, "new", 1.0)
    one, two = tmp_path / "one.html", tmp_path / "two.html"
    assert main(["report", new, "-o", str(one)]) == 0
    assert main(["report", new, "--against", base, "-o", str(two)]) == 0
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    for path, overlaid in ((one, False), (two, True)):
        page.goto(path.as_uri(), wait_until="load")
        page.locator("canvas").first.wait_for(state="attached")
        page.wait_for_function("() => window.Bokeh && [...Bokeh.index.all_views()].length > 0")
        page.wait_for_timeout(500)
        drawn = page.evaluate(DRAWN)
        assert drawn["docs"] == 1 and drawn["figures"] >= 3, drawn
        assert {"Time per derivative", "Ratio to the primal"} <= set(drawn["titles"]), drawn
        sizes = page.locator("canvas").evaluate_all(
            "cs => cs.map(c => c.width * c.height).filter(a => a > 10000)")  # fmt: skip
        assert len(sizes) >= 3, sizes  # the figures' canvases, drawn at their size
        if overlaid:
            assert drawn["dashed"] >= 6, drawn  # forward, reverse and f of base, dashed
            assert any(label.startswith("dashed: ") and "base.json" in label
                       for label in drawn["legend"]), drawn  # fmt: skip
            assert page.get_by_text("faster 2x").count() >= 1
        page.screenshot(path=screenshots / f"{path.stem}.png", full_page=True)
    assert requests and all(u.startswith(("file://", "data:", "blob:")) for u in requests), requests
    assert not console.errors(), console.errors()
