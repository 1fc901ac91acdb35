"""``tutorial.frame_page``: the exported gradient in a page of its own (notebook 01's last
section). One page in headless Chromium where it is here, and the path without it: the
files written, and how to open them said. No wall-clock threshold is asserted.

Internals: frame_page's lookup of Chromium (tutorial.export_page.chromium), patched to find
none: the path a machine without Chromium (Binder) takes.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from adlab import tutorial
from adlab.tutorial import export_page


def _chromium_or_skip() -> None:
    ci = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no", "off")
    why = None
    exe = os.environ.get("ADLAB_CHROMIUM", "/usr/bin/chromium")
    if not os.access(exe, os.X_OK) and shutil.which("chromium") is None:
        why = "no Chromium here (install Debian's chromium, or set ADLAB_CHROMIUM)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            why = "Playwright's Python package is missing"
    if why:
        pytest.fail(why) if ci else pytest.skip(why)


def _children() -> set[str]:
    """This process's children (a browser or server left behind would be one)."""
    out = subprocess.run(["ps", "-o", "pid=,comm=", "--ppid", str(os.getpid())],
                         capture_output=True, text=True, check=False).stdout  # fmt: skip
    return {line.strip() for line in out.splitlines() if line.split()[-1] != "ps"}


@pytest.mark.slow
def test_the_page_counts_gradients_in_a_frame_and_gives_jaxs(tmp_path):
    _chromium_or_skip()
    before = _children()
    page = tutorial.frame_page("g9_graphics", sizes=(5,), folder=tmp_path, frames=3)
    assert page.why_not == "", page.why_not
    assert page.agrees is True
    per_frame, us, agrees = page.measured[5]
    assert per_frame >= 1 and us > 0 and agrees
    # the page imports only the module, and shows its figures itself
    html = (tmp_path / "n5" / "index.html").read_text()
    assert re.findall(r'import .* from "([^"]+)"', html) == ["./g9_graphics.grad.mjs"]
    assert "<script src" not in html and "import(" not in html
    assert page.shown[5].endswith("µs per gradient"), page.shown
    rows = page.table().rows
    assert rows[0][0] == "5" and rows[0][3] == "yes"
    assert _children() <= before  # the browser is closed


def test_without_chromium_the_files_are_written_and_how_to_open_them_said(tmp_path, monkeypatch):
    monkeypatch.setattr(export_page, "chromium", lambda: None)
    page = tutorial.frame_page("g9_graphics", sizes=(3, 4), folder=tmp_path)
    for n in (3, 4):
        assert (tmp_path / f"n{n}" / "index.html").is_file()
        module = (tmp_path / f"n{n}" / "g9_graphics.grad.mjs").read_text()
        assert "export function grad(" in module
    assert page.agrees is None and page.measured == {}
    text = str(page)
    assert "not run" in text and "no Chromium here" in text
    assert f"cd {tmp_path} && python -m http.server" in text
    assert "http://localhost:8000/n3/" in text
    assert "<table" in page._repr_html_()
