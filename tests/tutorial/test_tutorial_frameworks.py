"""The tutorials' frameworks: ``adlab.tutorial.frameworks`` and the per-framework looks.

Readings are checked on records built by hand (the right answer is known);
passes, agreement and float32 digits on small real runs in the light frameworks
(autograd, NumPy, PyTorch), never timings.

Internals: the frameworks module's installed check (tutorial.frameworks, patched so a
framework looks missing or present) and the plots' looks per framework
(plots.colors.FRAMEWORK_LOOKS), which the figures are checked against.
"""

from __future__ import annotations

import pytest

import adlab
from adlab import tutorial
from adlab.measure import Series
from adlab.tutorial import frameworks

SMALL_MLP = {"N1": 8, "N2": 3}


def rec(label: str, n: int, median_s: float, *, backend: str = "jax", jit: bool = True,
        mode: str = "reverse", precision: str = "float64", **kw) -> adlab.Record:  # fmt: skip
    return adlab.Record(model="m", mode=mode, n=n, label=label, scheme=None, jit=jit,
                        precision=precision, backend=backend, median_s=median_s, **kw)  # fmt: skip


def test_available_leaves_out_what_is_not_installed_and_says_how_to_install_it(monkeypatch, capsys):
    monkeypatch.setattr(frameworks, "installed", lambda name: name != "torch")
    torch_series = Series("reverse", backend="torch", label="batched (PyTorch)")
    got = tutorial.available(["reverse", "reverse(torch)", torch_series, "reverse(autograd)"])
    assert got == ["reverse", "reverse(autograd)"]
    out = capsys.readouterr().out.strip()
    assert out == ("Left out: reverse(torch), batched (PyTorch): PyTorch is not installed here "
                   "(pip install 'adlab[torch]').")  # fmt: skip
    monkeypatch.setattr(frameworks, "installed", lambda name: True)
    assert tutorial.available(["reverse(torch)"]) == ["reverse(torch)"]
    assert capsys.readouterr().out == ""


def test_how_names_the_way_each_framework_ran():
    assert tutorial.how("torch", False) == "tape, eager"
    assert tutorial.how("torch", True) == "torch.compile"
    assert tutorial.how("tensorflow", False) == "GradientTape, eager"
    assert tutorial.how("jax", True) == "tracing, XLA (jax.jit)"
    assert tutorial.how("autograd", False) == "tape over NumPy"


def test_frame_table_against_the_differences():
    records = [
        rec("numeric[central](numpy)", 10, 4e-4, backend="numpy", jit=False),
        rec("reverse(tensorflow)", 10, 2e-3, backend="tensorflow", jit=False),
        rec("reverse(torch)", 10, 1e-4, backend="torch", jit=False),
        rec("reverse(torch)", 100, 1e-3, backend="torch", jit=False),  # another n: not read
        rec("primal(torch)", 10, 1e-5, backend="torch", jit=False, mode="primal"),
    ]
    t = tutorial.frame_table(records, n=10, baseline="numeric[central](numpy)")
    assert t.rows == (
        ("numeric[central](numpy)", "plain NumPy", "400 us", "1x", "40"),
        ("reverse(tensorflow)", "GradientTape, eager", "2 ms", "5x", "8"),
        ("reverse(torch)", "tape, eager", "100 us", "0.25x", "160"),
    )


def test_ratios_table_has_flops_only_where_a_counter_counted():
    records = [rec("batched", 10, 1e-3, ratio_to_primal=2.5, flops_ratio=3.1),
               rec("batched (PyTorch)", 10, 2e-3, backend="torch", jit=False,
                   ratio_to_primal=2.0, flops_ratio=3.0),
               rec("reverse(autograd)", 10, 2e-3, backend="autograd", jit=False,
                   ratio_to_primal=4.0)]  # fmt: skip
    t = tutorial.ratios_table(records)
    assert t.select("series", "time / f", "flops / f").rows == (
        ("batched", "2.5x", "3.1x"), ("batched (PyTorch)", "2x", "3x"),
        ("reverse(autograd)", "4x", "-"))  # fmt: skip
    assert "FlopCounterMode" in t.notes[0] and "matrix products only" in t.notes[0]


def test_gist_table_is_laid_out_as_the_gist():
    records = [rec("primal", 10, 1.1e-7, mode="primal"), rec("primal", 1000, 7.1e-6, mode="primal"),
               rec("forward", 10, 7.4e-7, mode="forward"), rec("forward", 1000, 2.513e-3,
                                                                 mode="forward"),
               rec("reverse(torch)", 10, 1.4e-5, backend="torch", jit=False),
               rec("reverse(autograd)", 1000, 5.82e-5, backend="autograd", jit=False)]  # fmt: skip
    t = tutorial.gist_table(records)
    assert t.columns == ("n", "f", "forward", "reverse(torch)", "reverse(autograd)")
    assert t.rows == (("10", "0.11", "0.74", "14", "-"), ("1000", "7.1", "2513", "-", "58.2"))
    assert t.notes[0] == ("microseconds per call; tracing, XLA (jax.jit): forward; tape, eager: "
                          "reverse(torch); tape over NumPy: reverse(autograd)")  # fmt: skip


def test_julia_gist_holds_the_question_figures():
    t = tutorial.julia_gist()
    assert t.columns == ("n", "f", "ForwardDiff", "ReverseDiff", "Zygote", "Tracker",
                         "complex step")  # fmt: skip
    assert t.rows[-1] == ("1000", "7.1", "2513", "42.5", "37.7", "58.2", "9184")


def test_compiled_table_breaks_even_or_never():
    records = [
        rec("reverse(eager)", 10, 1e-3, jit=False),
        rec("reverse", 10, 1e-4, compile_s=0.9),
        rec("reverse(torch)", 10, 2e-4, backend="torch", jit=False),
        rec("reverse(torch,jit)", 10, 3e-4, backend="torch", compile_s=5.0),
        rec("reverse(autograd)", 10, 3e-4, backend="autograd", jit=False),
    ]
    rows = {r[0]: r for r in tutorial.compiled_table(records).rows}
    assert rows["JAX"] == ("JAX", "reverse", "10", "1 ms", "100 us", "10x", "900 ms", "1,000")
    assert rows["PyTorch"][5:] == ("0.667x", "5 s", "never")  # compiled is slower: never pays
    assert rows["autograd"][3:] == ("300 us", "-", "-", "-", "-")


def test_precision_pairs_pair_float32_with_float64():
    records = [rec("reverse(torch)", 1000, 2e-4, backend="torch", jit=False, error=0.0),
               rec("reverse(torch,float32)", 1000, 1e-4, backend="torch", jit=False,
                   precision="float32", error=2.2e-5),
               rec("reverse", 1000, 1e-4, error=0.0)]  # no float32 partner: no row  # fmt: skip
    t = tutorial.precision_pairs(records)
    assert t.rows == (("PyTorch", "tape, eager", "reverse", "1000", "200 us", "100 us", "0.5x",
                       "0", "2.2e-05"),)  # fmt: skip


def test_passes_of_f_per_framework():
    t = tutorial.passes_table("normal_logpdf", ["reverse", "reverse(autograd)",
                                                "forward(autograd)", "complex-step(numpy)"],
                              [3])  # fmt: skip
    assert [(r[0], r[2]) for r in t.rows] == [
        ("reverse", "1"), ("reverse(autograd)", "1"), ("forward(autograd)", "3"),
        ("complex-step(numpy)", "3")]  # fmt: skip


def test_float32_keeps_seven_digits_in_every_framework():
    t = tutorial.float32_check("normal_logpdf", 20, ["reverse", "reverse(autograd)"])
    assert t.rows == (("reverse", "yes", "yes"), ("reverse(autograd)", "yes", "yes"))


def test_the_per_sample_case_in_pytorch_agrees_with_jax():
    pytest.importorskip("torch")
    jax_modes = [Series("reverse", label="loop (lax.map)", model="mlp_per_sample",
                        settings={**SMALL_MLP, "STYLE": "map"}),
                 Series("reverse", label="vmap", model="mlp_per_sample",
                        settings={**SMALL_MLP, "STYLE": "vmap"}),
                 Series("reverse", label="batched", model="mlp_batched",
                        settings=SMALL_MLP)]  # fmt: skip
    torch_modes = tutorial.in_framework(jax_modes, "torch")
    assert [(v.label, v.backend, v.model, dict(v.settings)) for v in torch_modes] == [
        ("loop (PyTorch)", "torch", "mlp_per_sample", {**SMALL_MLP, "STYLE": "map"}),
        ("vmap (PyTorch)", "torch", "mlp_per_sample", {**SMALL_MLP, "STYLE": "vmap"}),
        ("batched (PyTorch)", "torch", "mlp_batched", SMALL_MLP)]  # fmt: skip
    same = tutorial.agreement([*jax_modes, *torch_modes], n=5)
    assert [r[2] for r in same.rows] == ["yes"] * 6


def test_frameworks_table_names_versions_or_the_pip_command(monkeypatch):
    monkeypatch.setattr(frameworks, "installed",
                        lambda name: name not in ("torch", "tensorflow"))  # fmt: skip
    rows = {r[0]: r for r in tutorial.frameworks_table().rows}
    assert list(rows) == ["JAX", "NumPy", "PyTorch", "TensorFlow", "autograd", "JavaScript",
                          "TensorFlow.js", "jax-js"]  # fmt: skip
    import jax

    assert rows["JAX"][1:] == (jax.__version__, "cpu", "jax.jit")
    assert rows["PyTorch"] == ("PyTorch", "not installed", "pip install 'adlab[torch]'", "-")
    assert rows["autograd"][3] == "none"
    assert rows["JavaScript"][1].startswith("v") and rows["JavaScript"][3] == "none"  # Node's
    assert rows["TensorFlow.js"][1] == "4.22.0"  # the bundle's


def test_figures_give_each_framework_its_marker_and_each_mode_its_color():
    from bokeh.models import Scatter

    from adlab.plots import figures
    from adlab.plots.colors import FRAMEWORK_LOOKS

    records = [rec("reverse", n, 1e-5 * n) for n in (1, 10)]
    records += [rec("reverse(torch)", n, 2e-5 * n, backend="torch", jit=False) for n in (1, 10)]
    records += [rec("reverse(eager)", n, 3e-5 * n, jit=False) for n in (1, 10)]
    fig = figures.time_figure(records)
    dots = {r.data_source.data["label"][0]: r.glyph for r in fig.renderers
            if isinstance(r.glyph, Scatter) and "label" in r.data_source.data}  # fmt: skip
    assert dots["reverse"].marker == FRAMEWORK_LOOKS["jax"][0]
    assert dots["reverse(torch)"].marker == FRAMEWORK_LOOKS["torch"][0]
    # reverse on two frameworks: one color, two markers; two JAX series: two colors
    assert dots["reverse"].fill_color == dots["reverse(torch)"].fill_color
    assert dots["reverse(eager)"].fill_color != dots["reverse"].fill_color
    colors = figures.assign_colors(["reverse", "reverse(torch)", "reverse(eager)"])
    assert colors["reverse"] == colors["reverse(torch)"] != colors["reverse(eager)"]
