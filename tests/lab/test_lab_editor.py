"""The Lab's code editor: the committed bundle matches its sources; the error's line reaches it.

What the editor does in a browser (line numbers, the mark, typing) is checked by
tests/browser/test_lab_browser.py; here, the kernel's side.

Internals: the editor widget itself (lab.code_editor: CodeEditor, BUNDLE, the committed
bundle compared with its sources), which the Lab builds inside and does not export.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from _lab_helpers import FAST

import adlab
from adlab.catalog import source_of
from adlab.lab.code_editor import BUNDLE, CodeEditor

JS = Path(__file__).resolve().parents[2] / "js" / "editor"
#: the same files, in the same order, as ``sources`` in js/editor/build.mjs
SOURCES = ("package.json", "package-lock.json", "src/index.js")


@pytest.fixture(autouse=True)
def _tmp_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # saved edits go here, not into the repository


def test_the_committed_bundle_is_built_from_the_sources_in_js_editor():
    digest = hashlib.sha256()
    for name in SOURCES:
        digest.update(name.encode() + b"\0")
        digest.update((JS / name).read_bytes())
    first = BUNDLE.read_text().split("\n", 1)[0]
    built_from = re.search(r"sources sha256 ([0-9a-f]{64})", first)
    assert built_from, f"{BUNDLE} has no build header: {first[:120]!r}"
    assert built_from.group(1) == digest.hexdigest(), (
        "adlab/lab/static/editor.js is older than js/editor/: run `npm ci && npm run build` there"
    )


def test_the_bundle_is_an_es_module_with_a_render_function():
    text = BUNDLE.read_text()
    assert re.search(r"export\s*\{[^}]*\bas default\s*\}\s*;?\s*$", text), text[-200:]
    assert "render" in text[-400:]
    assert (BUNDLE.parent / "editor.LICENSES.txt").read_text().count("MIT") >= 5


def test_the_editor_syncs_its_text_error_line_and_height():
    editor = CodeEditor("x = 1\n", height="120px")
    state = editor.get_state()
    assert state["value"] == "x = 1\n" and state["error_line"] == 0
    assert state["height"] == "120px"
    assert state["_esm"] == BUNDLE.read_text()


def test_the_error_line_follows_the_labs_error():
    lab = adlab.Lab(**FAST)
    assert lab.error is None and lab.editor.error_line == 0
    good = source_of("normal_logpdf")
    lines = good.splitlines()
    k = next(i for i, line in enumerate(lines, 1) if "z = " in line)
    broken = "\n".join(lines[: k - 1] + ["    z = (", *lines[k:]])
    lab.editor.value = broken  # as typed in the editor
    assert lab.error.lineno == k and lab.editor.error_line == k

    last = len(lines)
    lab.editor.value = good + "\noops = (1 +\n"  # a different line, found while parsing
    assert lab.error.lineno == last + 2 and lab.editor.error_line == last + 2

    lab.reset_button.click()
    assert lab.error is None and lab.editor.error_line == 0
    assert lab.editor.value == good


def test_a_model_switch_replaces_the_text_and_clears_the_mark():
    lab = adlab.Lab(**FAST)
    lab.editor.value = source_of("normal_logpdf") + "\ndef oops(:\n"
    assert lab.editor.error_line > 0
    lab.model_dropdown.value = "rosenbrock"
    assert lab.editor.value == source_of("rosenbrock")
    assert lab.error is None and lab.editor.error_line == 0
