"""Second order and sparsity in the Lab: Hessian and HVP series, sparse series, their
patterns and colors, and the choices greyed out where the ticks leave them nothing to run.

Every run is real (``adlab.bench`` at n <= 10). A second derivative compiles for
a second or more on a loaded machine, so these runs get a longer budget than
``FAST``'s: a point skipped for its budget would prove nothing here.

Internals: the Lab's mode tables and refusals (lab.modes: variants, mode_refusal,
composition_refusal, sparse_refusal), its plan (lab.plan.plan) and the patterns it draws
(lab.patterns.patterns): what greys a choice out and what a run draws, which the Lab shows
only as widgets.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lab_helpers import FAST, measured, series_points

import adlab
from adlab import crossovers
from adlab._vocab import Record
from adlab.engine.backends import KNOWN
from adlab.engine.modes import get_rule
from adlab.lab import LabState
from adlab.lab.modes import (
    composition_refusal,
    mode_refusal,
    sparse_refusal,
    variants,
)
from adlab.lab.plan import plan
from adlab.measure import parse_variant

SLOW = {**FAST, "budget_s": 30.0}


@pytest.fixture(autouse=True)
def _tmp_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


# ------------------------------------------------------------------ the ticks as variants
def test_second_order_runs_once_per_composition_and_sparse_beside_dense():
    got = variants(["forward", "numeric", "hessian", "hvp"], ["jax"], "central",
                   ["forward-over-reverse", "reverse-over-forward"], "both")  # fmt: skip
    assert got == [
        "forward", "forward(sparse)", "numeric[central]",
        "hessian[forward-over-reverse]", "hessian[forward-over-reverse](sparse)",
        "hessian[reverse-over-forward]", "hessian[reverse-over-forward](sparse)",
        "hvp[forward-over-reverse]", "hvp[reverse-over-forward]",
    ]  # fmt: skip
    for spec in got:  # each is a variant the sweep reads back to the same series
        assert parse_variant(spec).spelled() == spec
    # "sparse" replaces the dense series of the modes that have a sparse form, and only those
    assert variants(["forward", "reverse", "numeric"], ["jax"], "central", [], "sparse") == [
        "forward(sparse)", "reverse(sparse)", "numeric[central]"]  # fmt: skip


def test_complex_step_is_offered_for_the_dense_hessian_only():
    got = variants(["hessian", "hvp"], ["jax"], "central", ["complex-step"], "both")
    assert got == ["hessian[complex-step]"]  # no HVP, no sparse Hessian (taken in HVPs)
    assert composition_refusal("complex-step", ["hvp"]).hint == "Hessian only"
    assert composition_refusal("complex-step", ["hvp", "hessian"]) is None
    assert composition_refusal("reverse-over-forward", ["hvp"]) is None


def test_sparse_applies_on_jax_and_other_frameworks_run_dense():
    got = variants(["forward"], ["jax", "numpy"], "central", [], "sparse")
    assert got == ["forward(sparse)", "forward(numpy)"]


def _labels(backends) -> str:
    """'JAX', 'JAX or PyTorch', 'JAX, PyTorch or autograd': who runs a mode, in words."""
    names = [KNOWN[b].label for b in backends]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def test_refusals_name_what_to_tick():
    # NumPy has no AD, so it nests no modes; the frameworks that do are the engine's to say
    nests = get_rule("hessian").backends
    hessian = mode_refusal("hessian", ["numpy"])
    which = _labels(nests) if len(nests) == 1 else "one of them"
    assert hessian.why == (
        f"The Hessian runs on {_labels(nests)} only yet: tick {which} to measure it"
    )
    assert hessian.hint == (f"tick {_labels(nests)}" if len(nests) <= 2 else "not on NumPy")
    assert mode_refusal("hessian", []).hint == "tick a framework"
    assert mode_refusal("hvp", ["numpy", "jax"]) is None
    # NumPy's lack of AD is known once its backend is loaded: said when a run starts
    assert mode_refusal("forward", ["numpy"]) is None
    assert sparse_refusal(["numpy"]).hint == "tick JAX"
    assert sparse_refusal(["jax"]) is None
    none = composition_refusal("numeric", ["forward"])
    assert none.hint == "tick Hessian or HVP" and "second derivative" in none.why


def test_a_sparse_variant_on_another_framework_is_left_out_with_the_reason():
    defaults = dict(scheme="central", jit=None, precision="float64", backend="jax")
    got = plan(["forward(sparse)", "forward(autograd,sparse)"], **defaults)
    assert got.variants == ("forward(sparse)",)
    assert "pattern is read from a JAX program" in got.note()
    assert "use backend=" not in got.note()  # a caller's advice; in the Lab a tick does it


def test_crossovers_compare_only_series_that_compute_the_same():
    def rec(label: str, mode: str, order: int, n: int, t: float) -> Record:
        return Record(model="m", mode=mode, n=n, label=label, scheme=None, jit=True,
                      precision="float64", backend="jax", order=order, median_s=t,
                      median_lo_s=t * 0.99, median_hi_s=t * 1.01)  # fmt: skip

    # reverse is faster than the Hessian at n = 10 and slower at n = 100: no crossover
    times = {"reverse": (1, 1e-3, 1e-1), "hessian": (2, 1e-2, 1e-2), "forward": (1, 1e-2, 1e-2)}
    records = [rec(label, label, order, n, t)
               for label, (order, *ts) in times.items()
               for n, t in zip((10, 100), ts, strict=True)]  # fmt: skip
    found = crossovers(records)
    assert {frozenset((c.faster, c.slower)) for c in found} == {frozenset(("forward", "reverse"))}


# --------------------------------------------------------------------- runs in the Lab
def test_a_hessian_and_an_hvp_run_through_the_lab_and_are_drawn():
    lab = adlab.Lab("rosenbrock", sizes=[3, 10], modes=["reverse"], frameworks=["jax"],
                    steps=False, **SLOW)  # fmt: skip
    lab.mode_checkboxes["hessian"].value = True
    lab.mode_checkboxes["hvp"].value = True
    lab.composition_checkboxes["reverse-over-forward"].value = True
    assert lab.compositions == ["forward-over-reverse", "reverse-over-forward"]
    lab.run_button.click()
    assert lab.wait(timeout=600)
    assert lab.status.startswith("Done"), lab.status

    second = {"hessian[forward-over-reverse]", "hessian[reverse-over-forward]",
              "hvp[forward-over-reverse]", "hvp[reverse-over-forward]"}  # fmt: skip
    assert set(measured(lab)) == {"reverse", *second} == set(lab.plots.series)
    assert series_points(lab) == measured(lab)
    for r in lab.results:
        if r.label in second:
            assert (r.order, r.mode, r.scheme) == (2, r.label.split("[")[0],
                                                   r.label.split("[")[1].rstrip("]"))  # fmt: skip
            assert r.error is not None and r.error < 1e-8  # against the float64 reference
    table = lab.plots.records.data
    assert list(table["label"]) == [r.label for r in lab.results]
    # the advice is given per derivative: the gradient's and the Hessian's apart
    assert lab.status.lower().count("n = 10 on rosenbrock") == 3  # gradient, Hessian, HVP
    assert all({c.faster.split("[")[0], c.slower.split("[")[0]} in ({"hessian"}, {"hvp"})
               for c in lab.crossovers)  # fmt: skip
    # each composition has a look of its own: a color no other series on JAX has
    colors = {s.label: s.glyphs["time"][0].glyph.line_color
              for s in lab.plots._series_slots if s.label}  # fmt: skip
    assert len(set(colors.values())) == len(colors)
    # labels this long take two legend columns, not three (they would overlap)
    legends = [lab.plots.figures[f].below[-1] for f in ("time", "ratio", "error")]
    assert {legend.ncols for legend in legends} == {2}
    lab.modes = ["reverse"]  # a run of short labels only: three columns again
    lab.run(wait=True, timeout=600)
    assert set(lab.plots.series) == {"reverse"}
    assert {legend.ncols for legend in legends} == {3}


def test_a_sparse_run_shows_its_patterns_and_colors():
    lab = adlab.Lab("bvp_residual", sizes=[3, 10], modes=["forward", "reverse"],
                    frameworks=["jax"], steps=False, **SLOW)  # fmt: skip
    lab.sparse_toggle.value = "both"
    assert lab.sparse == "both"
    lab.run(wait=True, timeout=600)
    assert lab.status.startswith("Done"), lab.status
    assert set(measured(lab)) == {"forward", "reverse", "forward(sparse)", "reverse(sparse)"}
    assert set(lab.plots.series) == set(measured(lab))

    # a tridiagonal Jacobian: 3 colors at every n, 3n - 2 nonzeros, in the records and table
    for r in lab.results:
        if r.label.endswith("(sparse)"):
            assert (r.colors, r.nnz) == (3, 3 * r.n - 2)
        else:
            assert r.colors is None
    table = lab.plots.records.data
    for label, colors, nnz, n in zip(table["label"], table["colors"], table["nnz"], table["n"],
                                     strict=True):  # fmt: skip
        if label.endswith("(sparse)"):
            assert (colors, nnz) == (3, 3 * n - 2)
    assert "forward(sparse) at n = 10: 3 colors (3 JVPs) for 28 nonzeros" in lab.status

    # the patterns, drawn at n = 10: the Jacobian's nonzeros there, colored validly
    model = adlab.load_model("bvp_residual")
    (u,) = model.setup(10)
    dense = adlab.derivative(model, u, mode="forward")
    panels = lab.plots.patterns
    assert not panels["hessian"].figure.visible
    for kind in ("forward", "reverse"):
        panel = panels[kind]
        assert panel.figure.visible
        grouped = "columns" if kind == "forward" else "rows"
        assert panel.figure.title.text == f"{kind}: 3 colors of {grouped}, 28 nonzeros, n = 10"
        data = panel.source.data
        drawn = set(zip(np.asarray(data["y"]).tolist(), np.asarray(data["x"]).tolist(),
                        strict=True))  # fmt: skip
        assert {tuple(ij) for ij in np.argwhere(dense != 0).tolist()} <= drawn
        assert len(drawn) == 28
        # forward colors columns: no two nonzeros of one row share a color (rows: reverse)
        by = {}
        for y, x, g in zip(data["y"], data["x"], data["group"], strict=True):
            by.setdefault(y if kind == "forward" else x, []).append(g)
        assert all(len(gs) == len(set(gs)) for gs in by.values())

    # a run without sparse series shows no pattern
    lab.sparse = "dense"
    lab.run(wait=True, timeout=600)
    assert not any(p.figure.visible for p in panels.values())
    assert not lab.state.patterns


def test_a_sparse_hessian_shows_its_star_colored_pattern():
    state = LabState("rosenbrock", sizes=[10], modes=["hessian"], frameworks=["jax"],
                     sparse="sparse", steps=False, **SLOW)  # fmt: skip
    state.run(wait=True, timeout=600)
    (r,) = [r for r in state.results if r.mode != "primal"]
    assert r.label == "hessian[forward-over-reverse](sparse)" and not r.skipped
    assert (r.colors, r.nnz) == (3, 3 * 10 - 2)  # rosenbrock's Hessian is tridiagonal
    (shown,) = state.patterns
    assert (shown.kind, shown.n, shown.colors, shown.nnz) == ("hessian", 10, 3, 28)
    assert shown.title() == "Hessian: 3 star colors, 28 nonzeros, n = 10"


def test_choices_with_nothing_to_run_are_greyed_out_with_the_reason():
    lab = adlab.Lab(n=3, frameworks=["jax"], steps=False, **FAST)
    assert not lab.mode_checkboxes["hessian"].disabled
    assert not lab.sparse_toggle.disabled
    # no second-order mode ticked: the compositions have nothing to nest
    box = lab.composition_checkboxes["forward-over-reverse"]
    assert box.disabled and "tick Hessian or HVP" in box.description

    lab.framework_checkboxes["jax"].value = False
    lab.framework_checkboxes["numpy"].value = True
    for mode, words in (("hessian", "The Hessian"), ("hvp", "The Hessian-vector product")):
        box, why = lab.mode_checkboxes[mode], mode_refusal(mode, ["numpy"])
        assert box.disabled and box.description.endswith(f"({why.hint})")
        assert box.tooltip == why.why and box.tooltip.startswith(f"{words} runs on JAX")
    assert lab.sparse_toggle.disabled
    assert all("JAX program" in tip for tip in lab.sparse_toggle.tooltips)
    assert not lab.mode_checkboxes["numeric"].disabled

    lab.framework_checkboxes["jax"].value = True
    lab.mode_checkboxes["hvp"].value = True
    assert not lab.mode_checkboxes["hessian"].disabled
    assert lab.mode_checkboxes["hessian"].description == "Hessian"
    assert not lab.sparse_toggle.disabled
    assert not lab.composition_checkboxes["reverse-over-forward"].disabled
    step = lab.composition_checkboxes["complex-step"]
    assert step.disabled and "(Hessian only)" in step.description


def test_ticks_that_make_no_series_say_what_to_tick():
    state = LabState(n=3, modes=["hvp"], compositions=["complex-step"], frameworks=["jax"],
                     steps=False, **FAST)  # fmt: skip
    assert state.variants == []
    state.run()
    assert not state.running
    assert state.status == (
        "Choose at least one mode and one framework to measure, and a composition that "
        "Hessian or HVP takes (complex step: Hessian only)."
    )


def test_a_reverse_pattern_colored_through_the_front_says_so():
    """ba's rows of one color share cameras' columns of f: they are colored on the front's
    rows (2 colors), and the title says so, so the picture does not read as wrong."""
    from adlab.lab.patterns import patterns

    (shown,) = patterns(adlab.catalog.resolve_model("ba"), ["reverse(sparse)"], [40], "float64")
    assert (shown.kind, shown.colors) == ("reverse", 2) and "selection front" in shown.via
    assert shown.title() == f"reverse: 2 colors of rows via the front, {shown.nnz} nonzeros, n = 40"
    (plain,) = patterns(adlab.catalog.resolve_model("bvp_residual"), ["reverse(sparse)"], [40],
                        "float64")  # fmt: skip
    assert plain.via is None and "front" not in plain.title()
