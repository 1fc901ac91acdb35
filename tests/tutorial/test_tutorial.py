"""What the tutorials call: ``adlab.tutorial`` (quick mode, studies, readings) and
``adlab.plots.figures``.

Readings are checked on records built by hand, where the right answer is
known (a crossover at n = 10, an error slope of exactly q); studies on small,
real runs, for what does not depend on the machine (passes, agreement,
bounds), never for timings.
"""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys

import numpy as np
import pytest

import adlab
from adlab import tutorial
from adlab.measure import Series

SMALL_MLP = {"N1": 8, "N2": 3}


def rec(label: str, n: int, median_s: float, mode: str | None = None, **kw) -> adlab.Record:
    mode = mode or label.split("[")[0].split("(")[0]
    return adlab.Record(model="m", mode=mode, n=n, label=label, scheme=None, jit=True,
                        precision="float64", backend="jax", median_s=median_s, **kw)  # fmt: skip


def step(scheme: str, h: float, error: float, **kw) -> adlab.StepRecord:
    return adlab.StepRecord(model="m", n=3, precision="float64", scheme=scheme, h=h, error=error,
                            error_norm=error, **kw)  # fmt: skip


# ------------------------------------------------------------------ quick mode
@pytest.mark.parametrize(("value", "quick"), [
    (None, False), ("", False), ("0", False), ("false", False), ("off", False), ("no", False),
    ("1", True), ("yes", True), ("true", True), ("TRUE ", True),
])  # fmt: skip
def test_quick_reads_adlab_quick(monkeypatch, value, quick):
    if value is None:
        monkeypatch.delenv("ADLAB_QUICK", raising=False)
    else:
        monkeypatch.setenv("ADLAB_QUICK", value)
    assert tutorial.quick() is quick
    assert tutorial.pick("full", "quick") == ("quick" if quick else "full")


# ----------------------------------------------------------------------- Table
def test_table_text_html_and_select():
    t = tutorial.Table.of(("name", "n"), [("a<b", 1), ("long name", 100)], title="T",
                          notes=["a note"])  # fmt: skip
    assert str(t).splitlines() == [
        "T", "name         n", "---------  ---", "a<b          1", "long name  100", "a note",
    ]  # fmt: skip
    assert repr(t) == str(t)
    assert "<td>a&lt;b</td>" in t._repr_html_() and "<th>n</th>" in t._repr_html_()
    assert t.select("n").rows == (("1",), ("100",)) and t.select("n").title == "T"
    with pytest.raises(ValueError, match="no column"):
        t.select("missing")
    with pytest.raises(ValueError, match="cells"):
        tutorial.Table(("a", "b"), (("1",),))


def test_table_aligns_columns_as_told():
    t = tutorial.Table.of(("h", "error"), [("1e-1", "2.0e-03*"), ("1e-10", "4.0e-07 ")],
                          align="rr")  # fmt: skip
    assert str(t).splitlines() == [
        "    h     error", "-----  --------", " 1e-1  2.0e-03*", "1e-10  4.0e-07",
    ]  # fmt: skip
    assert t.select("error").align == "r"
    with pytest.raises(ValueError, match="align"):
        tutorial.Table.of(("a", "b"), [], align="x")


# -------------------------------------------------------------------- readings
def test_crossover_table_interpolates_and_names_the_winner():
    records = [
        rec("numeric", 1, 1e-6), rec("numeric", 100, 1e-4),  # grows as n
        rec("reverse", 1, 1e-5), rec("reverse", 100, 1e-5),  # flat
        rec("forward", 1, 1e-3), rec("forward", 100, 1e-3),  # slower everywhere
    ]  # fmt: skip
    t = tutorial.crossover_table(records, [("numeric", "reverse"), ("forward", "reverse"),
                                           ("numeric", "nothing")])  # fmt: skip
    # log t_a - log t_b goes from -ln 10 to +ln 10: it crosses zero half way, at n = 10
    assert t.rows[0][2] == "reverse faster above n \u2248 10"
    assert t.rows[1][2] == "reverse faster at every n measured (1 to 100)"
    assert t.rows[2][2] == "no measured points of 'nothing'"


def test_floor_warmup_ratio_and_per_row_tables():
    records = [
        rec("primal", 10, 1e-5, floor_s=5e-6),
        rec("reverse", 10, 2e-5, compile_s=0.02, first_call_s=1e-3, floor_s=5e-6,
            f_evals=4, primal_s=1e-5, flops_ratio=8.0),
        rec("reverse(eager)", 10, 2e-3, first_call_s=0.5, floor_s=5e-6, mode="reverse"),
        rec("forward", 10, None, skipped="over budget"),
    ]  # fmt: skip
    floor = tutorial.floor_table(records)
    assert [r[0] for r in floor.rows] == ["reverse", "reverse(eager)"]
    assert floor.rows[0][3] == "4x" and floor.notes == ("dispatch floor: JAX (jitted) 5 us",)
    # each framework's derivative over its own floor: eager TensorFlow's is 600 us
    tf = rec("reverse(tensorflow)", 10, 1.2e-3, floor_s=6e-4, mode="reverse")
    tf = dataclasses.replace(tf, backend="tensorflow", jit=False)
    both = tutorial.floor_table([*records, tf])
    assert both.rows[-1][0] == "reverse(tensorflow)" and both.rows[-1][3] == "2x"
    assert both.notes == ("dispatch floor: JAX (jitted) 5 us; TensorFlow (eager) 600 us",)
    warm = tutorial.warmup_table(records)
    assert warm.rows[0] == ("reverse", "10", "20 ms", "1 ms", "20 us", "1,000")
    assert warm.rows[1][2] == "-" and warm.rows[1][5] == "-"
    assert tutorial.ratio_table(records, "reverse(eager)", "reverse").rows == (
        ("10", "2 ms", "20 us", "100x"),
    )
    per_row = tutorial.per_output_row(records)
    assert per_row.rows == (("10", "4", "20 us", "5 us", "0.5x", "2x"),)


def test_truncation_order_is_the_slope_of_the_largest_steps():
    hs = 10.0 ** -np.arange(1, 9)
    steps = [step("central", h, 3 * h**2 + 1e-13) for h in hs]  # truncation, then a floor
    steps += [step("forward", h, 0.5 * h) for h in hs]
    assert tutorial.truncation_order(steps, "central") == pytest.approx(2.0, abs=1e-6)
    assert tutorial.truncation_order(steps, "forward") == pytest.approx(1.0, abs=1e-9)
    t = tutorial.orders_table(steps)
    assert t.rows == (("central", "2", "2"), ("forward", "1", "1"))
    with pytest.raises(ValueError, match="at least 2"):
        tutorial.truncation_order([step("richardson", 0.1, 0.0)], "richardson")


def test_orders_on_a_real_sweep():
    steps = list(adlab.step_errors("wide_moments", 3))
    orders = {s: round(tutorial.truncation_order(steps, s)) for s in ("forward", "central",
                                                                        "richardson")}  # fmt: skip
    assert orders == {"forward": 1, "central": 2, "richardson": 4}
    summary = tutorial.summary_table(adlab.step_summary(steps))
    assert [r[0] for r in summary.rows] == ["forward", "central", "richardson", "complex-step"]


def test_compare_modes_counts_passes_and_errors():
    t = tutorial.compare_modes("normal_logpdf", 3)
    assert t.select("mode", "f evals", "within 1e-08").rows == (
        ("forward", "3", "yes"), ("reverse", "1", "yes"), ("numeric[central]", "6", "yes"),
        ("complex-step", "3", "yes"),
    )  # fmt: skip


def test_precision_and_richardson_tables():
    rows = adlab.precision_table("rosenbrock", 3, modes=("reverse", "numeric[central]"))
    t = tutorial.precision_rows_table(rows)
    assert t.select("mode", "theory").rows == (("reverse", "8.7"), ("numeric[central]", "5.8"))
    points = adlab.richardson_check("wide_moments", 3, steps=[1e-1, 1e-2])
    r = tutorial.richardson_table(points)
    assert [row[0] for row in r.rows] == ["1e-01", "1e-02"]


# ------------------------------------------------------------------- XLA costs
def test_xla_costs_passes_bound_and_memory():
    rows = tutorial.xla_costs("normal_logpdf", [5, 3], ["forward", "reverse", "numeric[central]"])
    assert [(r.label, r.n, r.f_evals) for r in rows] == [
        ("forward", 3, 3), ("reverse", 3, 1), ("numeric[central]", 3, 6),
        ("forward", 5, 5), ("reverse", 5, 1), ("numeric[central]", 5, 10),
    ]  # fmt: skip
    for r in rows:
        assert r.flops > 0 and r.primal_flops > 0 and r.flops_ratio == r.flops / r.primal_flops
        assert r.temp_bytes >= 0 and r.argument_bytes > 0 and r.output_bytes > 0
    bound = tutorial.bound_table(rows).select("mode", "within 6x f")
    assert dict(bound.rows)["reverse"] == "yes"
    table = tutorial.costs_table(rows)
    assert table.columns[0] == "mode" and len(table.rows) == 6
    two = rows + tutorial.xla_costs("wide_moments", [40], ["forward", "reverse"])
    assert tutorial.costs_table(two).columns[0] == "model"
    cheapest = tutorial.cheapest_table(two).select("model", "n", "fewest flops")
    assert ("wide_moments", "40", "reverse") in cheapest.rows
    with pytest.raises(ValueError, match="compiled"):
        tutorial.xla_costs("normal_logpdf", [3], ["reverse(eager)"])


# --------------------------------------------------------------------- studies
def test_fused_descent_agrees_and_times_four_ways():
    r = tutorial.fused_descent("g9_graphics", n=3, steps=5)
    assert r.same_result is True
    for s in (r.numpy_fd_s, r.eager_s, r.per_call_s, r.fused_s, r.compile_fused_s):
        assert s > 0 and math.isfinite(s)
    assert r.speedup == r.per_call_s / r.fused_s
    t = tutorial.fused_table(r)
    assert len(t.rows) == 4 and t.columns == ("way", "per step", "steps per 16 ms frame")
    with pytest.raises(ValueError, match="steps"):
        tutorial.fused_descent("g9_graphics", n=3, steps=0)
    with pytest.raises(ValueError, match="one argument"):
        tutorial.fused_descent(
            adlab.load_model("g9_graphics").__class__.from_function(
                lambda a, b: (a * b).sum(), wrt=(0, 1)
            ),
            n=3,
        )


def test_python_loop_model_is_the_per_sample_loss():
    loop = tutorial.python_loop_model(**SMALL_MLP)
    mapped = adlab.load_model("mlp_per_sample", **SMALL_MLP)
    params, xs = mapped.setup(4)
    assert np.allclose(loop.function("numpy")(params, xs), mapped.function("numpy")(params, xs))
    v = tutorial.python_loop_variant(**SMALL_MLP)
    assert v.jit is False and v.mode == "reverse" and v.label == "Python loop (eager)"


def test_agreement_of_the_per_sample_series():
    variants = [
        Series("reverse", label="map", model="mlp_per_sample", settings={**SMALL_MLP}),
        Series("reverse", label="vmap", model="mlp_per_sample",
                settings={**SMALL_MLP, "STYLE": "vmap"}),
        Series("reverse", label="batched", model="mlp_batched", settings=SMALL_MLP),
        tutorial.python_loop_variant(**SMALL_MLP),
    ]  # fmt: skip
    t = tutorial.agreement(variants, n=4)
    assert t.select("series", "agrees to 1e-10").rows == (
        ("map", "yes"),
        ("vmap", "yes"),
        ("batched", "yes"),
        ("Python loop (eager)", "yes"),
    )
    mixed = tutorial.agreement(["reverse", "forward", "numeric[forward]"], n=3,
                               model="normal_logpdf")  # fmt: skip
    assert [row[2] for row in mixed.rows] == ["yes", "yes", "no"]  # forward differences: ~1e-8
    with pytest.raises(ValueError, match="names no model"):
        tutorial.agreement(["reverse"], n=3)


# --------------------------------------------------------------------- figures
def test_figures_build_from_results_and_serialize():
    from bokeh.embed import json_item

    from adlab.plots import figures

    records = [rec("primal", n, 1e-5 * n) for n in (1, 10)]
    records += [rec("reverse", n, 2e-5, ratio_to_primal=2.0, floor_s=5e-6, compile_s=0.01,
                    first_call_s=1e-4, error=0.0) for n in (1, 10)]  # fmt: skip
    records += [rec("numeric[central]", n, 1e-6 * n * n, ratio_to_primal=0.1 * n, error=1e-10)
                for n in (1, 10)]  # fmt: skip
    steps = [step("central", h, h**2 + 1e-13, is_default=h == 1e-5) for h in (1e-1, 1e-3, 1e-5)]
    costs = tutorial.xla_costs("normal_logpdf", [3, 5])
    built = [
        figures.time_figure(records, frame=True), figures.ratio_figure(records),
        figures.error_figure(records), figures.warmup_figure(records),
        figures.steps_figure(steps), figures.lab_figures(records, steps),
        figures.costs_figure(costs, "temp_bytes", title="t", y_label="b", zero_at=1.0),
        figures.richardson_figure(adlab.richardson_check("wide_moments", 3, steps=[0.1, 0.01])),
        figures.precision_figure(adlab.precision_table("rosenbrock", 3, modes=("reverse",))),
        figures.bars([("a", 1.0), ("b", 2.0)], title="t", x_label="x", vline=(1.5, "v")),
        figures.stack(figures.ratio_figure(records), figures.time_figure(records)),
    ]  # fmt: skip
    for fig in built:
        json.dumps(json_item(fig))  # a document BokehJS can draw
    # the crossover of the two series (reverse overtakes numeric) is marked
    assert any("crossover" in str(item.label) for item in built[0].legend[0].items)


def test_colors_are_distinct_and_shared_across_figures():
    from adlab.plots import figures

    labels = ["numpy FD (as G9.js)", "jax FD (jit)", "reverse (jit)",
              "reverse (eager, as tf.grads)", "reverse", "numeric[central](numpy)"]  # fmt: skip
    colors = figures.assign_colors(labels)
    assert len(set(colors.values())) == len(labels)
    assert figures.assign_colors(["reverse"]) == {"reverse": colors["reverse"]}


def test_show_does_nothing_outside_a_kernel(capsys):
    from adlab.plots import figures

    assert figures.show(figures.bars([("a", 1.0)], title="t", x_label="x")) is None
    assert capsys.readouterr() == ("", "")


def test_tutorial_imports_no_ui_library():
    code = ("import sys, adlab.tutorial\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('bokeh', 'ipywidgets', 'jupyter_bokeh')))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         timeout=300)  # fmt: skip
    assert out.stdout.strip() == "[]"
