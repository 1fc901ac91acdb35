"""The Lab's Export JS: the ticked js series' gradient written as ``<model>.grad.mjs``
beside the records, through the state alone (no widgets), and refused, in the status,
where no js series in reverse or forward mode is ticked."""

from __future__ import annotations

import time

from _lab_helpers import FAST

from adlab.lab import LabState


def _said(state: LabState) -> str:
    """The status once the worker's callback has set it (it runs just after the result)."""
    start = time.monotonic()
    while state.status.startswith("Writing") and time.monotonic() - start < 10:
        time.sleep(0.01)
    return state.status


def test_export_js_writes_the_ticked_js_series_module(tmp_path):
    state = LabState("rosenbrock", n=6, modes=["forward", "numeric"], frameworks=["jax", "js"],
                     edits=tmp_path, **FAST)  # fmt: skip
    path = state.export_js().result(timeout=120)
    assert path == state.edits.folder / "rosenbrock.grad.mjs"
    source = path.read_text()
    assert source.startswith("// the Lab's Export JS: rosenbrock, forward, n=6")
    assert "export function grad(x)" in source and "// Any size: n >= 1" in source
    assert _said(state).startswith("Wrote ") and "rosenbrock.grad.mjs" in state.status
    assert "for any n from 1" in state.status


def test_export_js_without_a_js_series_says_what_to_tick(tmp_path):
    state = LabState("rosenbrock", n=6, modes=["reverse"], frameworks=["jax"], edits=tmp_path,
                     **FAST)  # fmt: skip
    assert isinstance(state.export_js().exception(timeout=120), ValueError)
    assert _said(state).startswith("Export JS failed: tick JavaScript (js)")
    assert not list(tmp_path.rglob("*.mjs"))
