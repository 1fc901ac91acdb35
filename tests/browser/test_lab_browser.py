"""The Lab in JupyterLab, in a real browser, driven like a person would.

Kernel-side tests cannot see a plot whose JavaScript failed: that only shows in
the browser. This test opens ``notebooks/00_quickstart.ipynb`` (a temporary copy)
in JupyterLab in headless Chromium, runs all cells from the Run menu, and uses
the Lab: Run, the n slider, a syntax error typed into the code editor (CodeMirror:
line numbers, the error's line marked), the fix, and a Hessian ticked and run.
Every check reads text a person would read (the status line, the error box, the
table under the plots), never pixels. A screenshot is saved at each step.

Run it alone with ``python -m pytest tests/browser -v``; set ``ADLAB_SCREENSHOTS``
to keep the screenshots somewhere (default: pytest's tmp_path, printed).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import Console

NOTEBOOK = "00_quickstart.ipynb"
TYPO = "oops = (1 +"  # what step 5 types: '(' is never closed

# What a failed render leaves in an output: JupyterLab's placeholder for a failed
# JavaScript output, ipywidgets' for a view that could not be built, Bokeh's own.
# (Outputs only: a notebook's prose may well quote these words.)
BROKEN_RENDER = re.compile(
    r"javascript error|error displaying widget|failed to load model class"
    r"|BokehJS does not appear to have successfully loaded",
    re.IGNORECASE,
)
# Console errors that count: those from the Lab's widgets, Bokeh and jupyter_bokeh.
OURS = re.compile(r"bokeh|jupyter[-_]widgets|ipywidgets|widget|adlab", re.IGNORECASE)
DONE = re.compile(r"Done: (\d+) points")
# Every wait below waits for what a person would see; its bound only catches a hang. A cold
# machine (JupyterLab's assets, pyc, JAX's compile cache all cold) is several times slower.
REACT_S = 120  # seconds for the page to show what the kernel just did
# The Lab's budget is seconds per point, compile included: a point over it is skipped, and a
# series with every point skipped is listed in the table but drawn in no legend. Its default
# (2 s) is for a person's machine; a cold one compiled JAX's Hessian past it. The tests check
# what is drawn, not how fast: a budget only a hang reaches.
BUDGET_S = 120.0


@pytest.fixture
def quickstart(lab_folder: Path) -> Path:
    """The quickstart's copy, its Lab given ``BUDGET_S`` (nothing else changed)."""
    path = lab_folder / NOTEBOOK
    text = path.read_text()
    assert text.count("adlab.Lab()") == 1, "the quickstart's Lab cell changed: update the test"
    path.write_text(text.replace("adlab.Lab()", f"adlab.Lab(budget_s={BUDGET_S})"))
    return path


def wait_until(what: str, check: Callable[[], object], timeout: float, every: float = 0.25):
    """Poll ``check`` until it returns something truthy; fail saying ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(every)
    pytest.fail(f"timed out after {timeout:.0f} s waiting for {what} (last seen: {last!r})")


@pytest.mark.timeout(480, method="signal")
def test_quickstart_lab_in_jupyterlab(quickstart, lab_server, browser_page, screenshots):
    page, console = browser_page
    shots = iter(range(1, 100))

    def shot(name: str) -> None:
        path = screenshots / f"{next(shots):02d}-{name}.png"
        page.screenshot(path=path, timeout=30_000)

    # -- 1. open the notebook and run all cells, from the Run menu -------------------------
    page.goto(lab_server.lab_url(quickstart), timeout=90_000)
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=90_000)
    wait_for_kernel_idle(page, timeout=120)
    shot("opened")
    page.locator(".lm-MenuBar-item", has_text="Run").click()
    page.locator('.lm-Menu-item[data-command="runmenu:run-all"]').click()
    wait_until("every code cell to finish", lambda: run_all_finished(page), timeout=180)
    wait_for_kernel_idle(page, timeout=REACT_S)
    prompts = page.locator(".jp-CodeCell .jp-InputPrompt").all_text_contents()
    if not all(re.fullmatch(r"\s*\[\d+\]:\s*", p) for p in prompts):
        shot("run-all-stopped")
        outputs = "\n".join(page.locator(".jp-OutputArea-output").all_inner_texts())
        pytest.fail(f"Run All stopped early (prompts {prompts}); outputs:\n{outputs[-3000:]}")

    # -- 2. the Lab renders: controls, plots drawn, no broken-render placeholder -----------
    lab = page.locator(".jp-OutputArea-output", has=page.locator(".adlab-editor")).first
    lab.wait_for(timeout=REACT_S * 1000)
    # the Lab's widgets render one by one (each its own view): the editor first is no sign
    # that the others are there
    hooks = ("adlab-editor", "adlab-n", "adlab-run", "adlab-status", "adlab-plots")

    def missing() -> list[str]:
        return [h for h in hooks if lab.locator(f".{h}").count() != 1]

    wait_until("the Lab's controls and plots", lambda: not missing(), timeout=REACT_S)
    canvases = lab.locator(".adlab-plots canvas")

    def plots_drawn() -> bool:
        assert_no_placeholder(page)  # fails at once, rather than waiting for a canvas
        return canvases.count() >= 4

    # BokehJS draws the four figures one after another: wait for all four, not the first
    wait_until("the Bokeh plots to draw four canvases", plots_drawn, timeout=REACT_S)
    table = lab.locator(".adlab-plots .slick-viewport").first
    table.wait_for(timeout=REACT_S * 1000)
    lab.locator(".adlab-editor").scroll_into_view_if_needed()
    shot("lab-rendered")
    assert_rendered_cleanly(page, console)

    status = lab.locator(".adlab-status")
    run = lab.locator(".adlab-run button, button.adlab-run").first
    rows = lab.locator(".adlab-plots .slick-row")
    # the quickstart shows a fresh Lab; the test presses Run itself
    assert "press Run" in status.inner_text(), f"the Lab is not fresh: {status.inner_text()!r}"
    assert rows.count() == 0, "the table has rows before anything ran"

    # -- 3. Run: the status line reports finished points, the table fills -----------------
    run.click()
    seen = watch_status(status, until=DONE, timeout=240)
    n_points = int(DONE.search(seen[-1]).group(1))
    assert n_points > 0, seen[-1]
    wait_until("table rows", rows.count, timeout=REACT_S)
    first_rows = rows.all_inner_texts()
    assert any(re.search(r"\d", r) for r in first_rows), first_rows

    # the legends (drawn on canvas) name the series the table lists, read via BokehJS; the
    # table and the plots are updated apart: waited for until both show the run
    def series_in_legends() -> tuple[set[str], set[str]] | None:
        series = set(lab.locator(".adlab-plots .slick-cell.l0").all_inner_texts()) - {""}
        legends = legend_labels(page)
        return (series, legends) if series and series <= legends else None

    wait_until("the legends to name the series the table lists", series_in_legends,
               timeout=REACT_S)  # fmt: skip
    table.scroll_into_view_if_needed()
    shot("after-run")
    assert_rendered_cleanly(page, console)

    # -- 4. the n slider: drag it a quarter of its track down (a decade, from 1000 to ~100) --
    readout = lab.locator(".adlab-n .widget-readout")
    n_before = readout.inner_text()
    drag_slider(page, lab.locator(".adlab-n"), by=-0.25)
    n_after = wait_until("the slider's readout to change",
                         lambda: readout.inner_text() != n_before and readout.inner_text(),
                         timeout=REACT_S)  # fmt: skip
    assert float(n_after) < float(n_before), (n_before, n_after)
    wait_until("the status line to react to n", lambda: "Settings changed" in status.inner_text(),
               timeout=REACT_S)  # fmt: skip
    lab.locator(".adlab-n").scroll_into_view_if_needed()
    shot("slider-moved")

    # -- 5. a syntax error typed into the editor: its line is named and marked ------------
    editor = lab.locator(".adlab-editor")
    content = editor.locator(".cm-content")
    numbers = editor.locator(".cm-lineNumbers .cm-gutterElement")
    original = editor_lines(editor)
    assert len(original) > 3, original
    wait_until("the editor's line numbers",
               lambda: str(len(original)) in numbers.all_inner_texts(),
               timeout=REACT_S)  # fmt: skip
    cells = page.locator(".jp-Notebook .jp-Cell").count()
    content.click()
    page.keyboard.press("Control+End")
    if original[-1] != "":  # the text ends without a newline: start a line
        page.keyboard.press("Enter")
    page.keyboard.type(TYPO, delay=20)
    typed = editor_lines(editor)
    assert TYPO in typed, typed
    line = typed.index(TYPO) + 1
    # the keys went to the editor only: none ran a notebook shortcut (e.g. "b", "1")
    assert page.locator(".jp-Notebook .jp-Cell").count() == cells
    blur(lab)
    error = lab.locator(".adlab-error")
    # the error box and the status line are two widgets, each updated by its own message
    wait_until(f"the error box and the status line to name line {line}",
               lambda: f"line {line}" in error.inner_text()
               and f"line {line}" in status.inner_text(), timeout=REACT_S)  # fmt: skip
    assert "SyntaxError" in error.inner_text(), error.inner_text()
    marked = editor.locator(".cm-adlab-errorLine")
    wait_until("the editor to mark the error's line", marked.count, timeout=REACT_S)
    assert marked.count() == 1 and marked.inner_text() == TYPO, marked.all_inner_texts()
    gutter_mark = editor.locator(".cm-lineNumbers .cm-adlab-errorGutter")
    assert gutter_mark.inner_text().strip() == str(line), gutter_mark.all_inner_texts()
    editor.locator(".cm-adlab-errorMarker").wait_for(state="visible", timeout=REACT_S * 1000)
    editor.scroll_into_view_if_needed()
    shot("syntax-error")

    # -- 6. fix it (delete what was typed): the mark goes; run again -------------------
    content.click()
    page.keyboard.press("Control+End")
    for _ in TYPO:
        page.keyboard.press("Backspace")
    assert "\n".join(editor_lines(editor)).rstrip("\n") == "\n".join(original).rstrip("\n")
    blur(lab)
    wait_until("the error box to clear", lambda: not error.inner_text().strip(), timeout=REACT_S)
    marks = editor.locator(".cm-adlab-errorLine, .cm-adlab-errorGutter, .cm-adlab-errorMarker")
    wait_until("the marks to go", lambda: marks.count() == 0, timeout=REACT_S)
    wait_until("the status line to accept the model",
               lambda: "Model updated" in status.inner_text(), timeout=REACT_S)  # fmt: skip
    run.click()
    seen = watch_status(status, until=DONE, timeout=240)
    n_points_again = int(DONE.search(seen[-1]).group(1))
    # a smaller n measures fewer sizes: the slider's n reached the run
    assert 0 < n_points_again < n_points, (n_points, seen[-1])
    wait_until("table rows", rows.count, timeout=REACT_S)
    table.scroll_into_view_if_needed()
    shot("fixed-and-ran-again")
    assert_rendered_cleanly(page, console)

    # -- 7. second order: tick Hessian and run; its series is drawn ---------------------
    open_tab(lab, "Second order")
    hessian = lab.locator(".adlab-mode-hessian input[type=checkbox]")
    hessian.scroll_into_view_if_needed()
    assert hessian.is_enabled(), "the Hessian is greyed out with JAX ticked"
    hessian.check()
    wait_until("the status line to react to the tick",
               lambda: "Settings changed" in status.inner_text(), timeout=REACT_S)  # fmt: skip
    run.click()
    watch_status(status, until=DONE, timeout=240)
    # the legends (read via BokehJS: the table shows only its first rows) name the series
    label = "hessian[forward-over-reverse]"
    wait_until(f"{label} in the legends", lambda: label in legend_labels(page), timeout=REACT_S)
    table.scroll_into_view_if_needed()
    shot("hessian-ran")
    assert_rendered_cleanly(page, console)


# ---------------------------------------------------------------------------- helpers


def wait_for_kernel_idle(page, timeout: float) -> None:
    """Wait for the status bar's "| Idle"; fail at once on a dialog (e.g. "Select Kernel")."""

    def idle() -> bool:
        dialog = page.locator(".jp-Dialog")
        if dialog.count() and dialog.first.is_visible():
            pytest.fail(f"a JupyterLab dialog blocks the run: {dialog.first.inner_text()!r}")
        return page.locator(".jp-StatusBar-TextItem", has_text=re.compile(r"\| Idle")).count() > 0

    wait_until("the kernel to be idle", idle, timeout=timeout, every=0.5)


def open_and_run_lab(page, url: str):
    """Open the notebook at ``url``, run all its cells from the Run menu, and return the
    Lab's output (a Playwright locator) once it is drawn."""
    page.goto(url, timeout=90_000)
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=90_000)
    wait_for_kernel_idle(page, timeout=120)
    page.locator(".lm-MenuBar-item", has_text="Run").click()
    page.locator('.lm-Menu-item[data-command="runmenu:run-all"]').click()
    wait_until("the cell to finish", lambda: run_all_finished(page), timeout=180)
    lab = page.locator(".jp-OutputArea-output", has=page.locator(".adlab-editor")).first
    lab.wait_for(timeout=REACT_S * 1000)
    return lab


def run_all_finished(page) -> bool:
    """True once some cell has run and none is queued or running (a failed cell stops the rest)."""
    prompts = page.locator(".jp-CodeCell .jp-InputPrompt").all_text_contents()
    ran = any(re.fullmatch(r"\s*\[\d+\]:\s*", p) for p in prompts)
    return ran and not any("*" in p for p in prompts)


def watch_status(status, until: re.Pattern[str], timeout: float) -> list[str]:
    """Every distinct text of the status line until one matches ``until``; fails on a failed run."""
    seen: list[str] = []

    def done() -> bool:
        text = status.inner_text().strip()
        if not seen or seen[-1] != text:
            seen.append(text)
        if "run failed" in text:
            pytest.fail(f"the Lab's run failed: {text}")
        return bool(until.search(text))

    wait_until(f"the status line to match {until.pattern!r}", done, timeout=timeout)
    print("status line:", *seen, sep="\n  ")
    return seen


def drag_slider(page, slider, by: float) -> None:
    """Drag the slider's handle with the mouse, ``by`` a fraction of its track."""
    slider.scroll_into_view_if_needed()
    handle = slider.locator(".noUi-handle").first
    track = slider.locator(".noUi-target").first
    h, t = handle.bounding_box(), track.bounding_box()
    assert h and t, "the slider is not laid out"
    x, y = h["x"] + h["width"] / 2, h["y"] + h["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(min(max(x + by * t["width"], t["x"]), t["x"] + t["width"]), y, steps=12)
    page.mouse.up()


def editor_lines(editor) -> list[str]:
    """The editor's text, line by line, as CodeMirror shows it (the models are short: all drawn)."""
    return [s.rstrip("\n") for s in editor.locator(".cm-content .cm-line").all_inner_texts()]


def blur(lab) -> None:
    """Click on plain text in the Lab (the n slider's name), as a person does to leave the
    editor (a tab's title would not do: the tab bar keeps the focus where it is)."""
    lab.locator(".adlab-n .widget-label").first.click()


def open_tab(lab, title: str) -> None:
    """Show the controls' tab whose title starts with ``title`` ("Modes (4)")."""
    lab.locator(".adlab-tabs .lm-TabBar-tab", has_text=title).first.click()


# The text of every visible legend entry, as BokehJS will draw it on the canvas.
# A label that names no data column is drawn as "Invalid field".
_LEGEND_JS = """() => {
  const docs = (window.Bokeh && window.Bokeh.documents) || [];
  const items = docs.flatMap(d => [...d.all_models]).filter(m => m.type === "LegendItem");
  if (!items.length || typeof items[0].get_labels_list_from_label_prop !== "function") return null;
  return items.filter(i => i.visible).flatMap(i => i.get_labels_list_from_label_prop());
}"""


def legend_labels(page) -> set[str]:
    labels = page.evaluate(_LEGEND_JS)
    assert labels is not None, "cannot read the legends through BokehJS (window.Bokeh.documents)"
    assert "Invalid field" not in labels, f"a legend shows 'Invalid field': {labels}"
    return set(labels)


def assert_no_placeholder(page) -> None:
    broken = page.locator(".jp-OutputArea-output").get_by_text(BROKEN_RENDER)
    if broken.count():
        pytest.fail(f"a broken-render placeholder is shown: {broken.first.inner_text()!r}")


def assert_rendered_cleanly(page, console: Console) -> None:
    assert_no_placeholder(page)
    legend_labels(page)
    ours = [e for e in console.errors() if OURS.search(e)]
    assert not ours, "errors in the browser console:\n" + "\n".join(ours)
