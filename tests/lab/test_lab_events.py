"""Rapid, random widget events during a running sweep: nothing raises, and the
final plots match the final settings (never an outdated run's points).

Internals: names the series the Lab plots as its mode tables do (lab.modes: FIRST_ORDER,
variant), to compare the final plots with the final settings.
"""

from __future__ import annotations

import math
import random
import time

import pytest
from _lab_helpers import FAST, measured, series_points

import adlab
from adlab.lab.modes import FIRST_ORDER, variant


@pytest.fixture(autouse=True)
def _tmp_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def _event(lab, rnd: random.Random) -> None:
    kind = rnd.choice(
        ["slider", "checkbox", "framework", "scheme", "jit", "precision", "compile", "run", "stop"]
    )
    if kind == "slider":
        lab.n_slider.value = 10 ** rnd.uniform(0, math.log10(20))
    elif kind == "checkbox":  # the first-order modes: the check below spells those
        box = lab.mode_checkboxes[rnd.choice(FIRST_ORDER)]
        box.value = not box.value
    elif kind == "framework":  # the two always installed: JAX and the NumPy baseline
        box = lab.framework_checkboxes[rnd.choice(["jax", "numpy"])]
        box.value = not box.value
    elif kind == "scheme":
        lab.scheme_dropdown.value = rnd.choice(lab.scheme_dropdown.options)
    elif kind == "jit":
        lab.jit_toggle.value = rnd.choice(lab.jit_toggle.options)
    elif kind == "precision":
        lab.precision_toggle.value = rnd.choice(lab.precision_toggle.options)
    elif kind == "compile":
        lab.compile_toggle.value = not lab.compile_toggle.value
    elif kind == "run":
        lab.run_button.click()
    else:
        lab.stop_button.click()


def test_100_random_events_during_a_sweep():
    lab = adlab.Lab(n=10, modes=["forward", "reverse"], steps=False, **FAST)
    lab.run_button.click()
    start = time.monotonic()
    while not lab.results and time.monotonic() - start < 60:
        time.sleep(0.01)
    rnd = random.Random(20261122)
    for _ in range(100):
        _event(lab, rnd)
        time.sleep(rnd.choice([0.0, 0.0, 0.001, 0.01, 0.05]))

    if not lab.modes:
        lab.mode_checkboxes["reverse"].value = True
    if "jax" not in lab.frameworks:
        lab.framework_checkboxes["jax"].value = True
    lab.run_button.click()  # the final run, with the final settings
    assert lab.wait(timeout=180)
    assert not lab.state.bugs

    n = lab.n
    assert n == round(lab.n_slider.value) and 1 <= n <= 20
    # NumPy runs only the differences (numeric, complex step): it has no AD
    want = {variant(m, lab.scheme, f) for f in lab.frameworks for m in lab.modes
            if f == "jax" or m in ("numeric", "complex-step")}  # fmt: skip
    assert set(measured(lab)) == want == set(lab.plots.series)
    assert series_points(lab) == measured(lab)
    drawn = lab.plots.records.data
    assert list(drawn["label"]) == [r.label for r in lab.results]
    assert max(drawn["n"]) == n
    assert set(drawn["precision"]) == {lab.precision_toggle.value}
    # jit: JAX compiles unless "eager" is chosen; NumPy never does
    jax_jit = lab.jit_toggle.value != "eager"
    assert all(r.jit == (jax_jit and r.backend == "jax") for r in lab.results)
    assert lab.status.startswith("Done")
