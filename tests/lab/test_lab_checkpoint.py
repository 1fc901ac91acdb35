"""Checkpointing in the Lab: for a model with loops, reverse once per ticked checkpoint
choice, side by side (memory against time); greyed out, saying why, elsewhere.

Internals: the Lab's checkpoint refusal (lab.modes.checkpoint_refusal): what greys the
choice out, which the
Lab shows only as disabled checkboxes and a hint; and the plots' series slots
(plots.live.LabPlots._series_slots) for each series' color.
"""

from __future__ import annotations

import pytest

import adlab
from adlab.lab import LabState
from adlab.lab.modes import checkpoint_refusal
from adlab.measure import parse_variant

LOOPS = ("ode", "lstm", "particle")


@pytest.fixture(autouse=True)
def _tmp_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # edits are saved under the working directory


def test_the_choice_is_offered_for_models_with_loops_in_reverse_mode():
    for name in LOOPS:
        model = adlab.load_model(name)
        assert model.uses_loops, name
        assert checkpoint_refusal(model, ["forward"]).hint == "tick reverse"
        assert checkpoint_refusal(model, ["reverse"]) is None
    for name in ("normal_logpdf", "rosenbrock"):
        model = adlab.load_model(name)
        assert not model.uses_loops
        why = checkpoint_refusal(model, ["reverse"])
        assert why.hint == "models with loops" and "no fori_loop or scan" in why.why


def test_a_model_without_loops_runs_plain_reverse_whatever_is_ticked():
    lab = LabState("normal_logpdf", modes=["forward", "reverse"], frameworks=["jax"],
                   checkpoints=["false", "true", "sqrt"])  # fmt: skip
    assert lab.variants == ["forward", "reverse"]


def test_the_checkboxes_are_greyed_out_with_the_reason_and_follow_the_model():
    lab = adlab.Lab("normal_logpdf", modes=["reverse"], frameworks=["jax"])
    boxes = lab.checkpoint_checkboxes
    assert list(boxes) == ["false", "true", "sqrt"]
    assert [c for c, b in boxes.items() if b.value] == ["false"]  # as usual, at first
    assert all(b.disabled for b in boxes.values())
    assert "no fori_loop or scan" in boxes["sqrt"].tooltip
    hint = lab.checkpoint_row.children[1]
    assert hint.value == "checkpointing: models with loops"

    lab.model_dropdown.value = "ode"
    assert not any(b.disabled for b in boxes.values()) and hint.value == ""
    lab.mode_checkboxes["reverse"].value = False
    assert all(b.disabled for b in boxes.values())
    assert hint.value == "checkpointing: tick reverse"

    boxes["sqrt"].value = True  # a tick reaches the state, in the choices' order
    assert lab.checkpoints == ["false", "sqrt"]


def test_each_ticked_checkpoint_is_a_reverse_series_of_its_own():
    lab = adlab.Lab("ode", sizes=[3, 10], modes=["reverse"], frameworks=["jax"],
                    steps=False, budget_s=30.0)  # fmt: skip
    for c in ("true", "sqrt"):
        lab.checkpoint_checkboxes[c].value = True
    marks = [parse_variant(v).checkpoint for v in lab.state.variants]
    assert marks == [None, True, "sqrt"], lab.state.variants
    lab.run(wait=True, timeout=300)
    drawn = {label for label, src in lab.plots.series.items() if src.data["n"]}
    assert len(drawn) == 3, drawn  # side by side, each its own series ...
    colors = {slot.glyphs["time"][0].glyph.line_color for slot in lab.plots._series_slots
              if slot.label in drawn}  # fmt: skip
    assert len(colors) == 3  # ... in a color of its own (one framework: one marker)
    assert all(r.peak_bytes for r in lab.results if not r.skipped), lab.results
