"""The text table names each framework its records ran on, with its version.

Internals: the bench command's findings (measure.cases.findings) and the floor's kinds
(measure.floor.floor_kind), which the table prints and no package exports.
"""

from __future__ import annotations

import dataclasses

from adlab import Record, format_table
from adlab.measure.cases import findings
from adlab.measure.floor import floor_kind
from adlab.report import describe_environment

_ENV = {"adlab": "0.1.0", "jax": "0.10.2", "numpy": "2.4.6", "device": "cpu"}


def _record(label: str, backend: str, version: str | None) -> Record:
    env = {**_ENV, "framework": backend, "framework_version": version}
    return Record(model="m", mode="reverse", n=10, label=label, scheme=None, jit=False,
                  precision="float64", backend=backend, median_s=1e-4, env=env)  # fmt: skip


def test_the_environment_line_names_every_framework_with_its_version():
    records = [_record("reverse", "jax", "0.10.2"), _record("reverse(torch)", "torch", "2.9.0"),
               _record("reverse(autograd)", "autograd", "1.8.0")]  # fmt: skip
    line = describe_environment(records)
    assert line.endswith("jax 0.10.2, numpy 2.4.6, torch 2.9.0, autograd 1.8.0")
    assert "torch 2.9.0" in format_table(records).splitlines()[0]
    # JAX alone: as before, no framework named twice
    assert describe_environment(records[:1]).endswith("adlab 0.1.0, jax 0.10.2, numpy 2.4.6")


def test_the_footer_says_each_frameworks_floor_and_how_it_ran():
    """The floors span 3 us (eager PyTorch) to 600 us (eager TensorFlow): the footer
    names each, never one "trivial jitted call" for all."""
    floors = {"jax": (4e-6,), "torch": (3e-6, 5e-6), "tensorflow": (6e-4,), "autograd": (1e-6,)}
    records = [dataclasses.replace(_record(f"reverse({b})", b, "1"), floor_s=s, n=n)
               for b, values in floors.items() for n, s in enumerate(values, 1)]  # fmt: skip
    (line,) = [x for x in format_table(records).splitlines() if x.startswith("dispatch floor")]
    assert line.endswith("JAX (jitted) 4 us; PyTorch (eager) 3 us to 5 us; "
                         "TensorFlow (eager) 600 us; autograd (plain NumPy) 1 us")  # fmt: skip
    assert "as each framework's users run it" in line and "jitted call" not in line
    assert floor_kind("numpy") == "NumPy" and floor_kind(None) == "JAX (jitted)"


def test_a_finding_at_the_floor_names_that_frameworks_floor():
    records = []
    for b, floor in (("jax", 4e-6), ("tensorflow", 6e-4)):
        for mode, label in (("primal", f"primal({b})"), ("reverse", f"reverse({b})")):
            r = _record(label, b, "1")
            records.append(dataclasses.replace(r, mode=mode, floor_s=floor, at_floor=True,
                                               median_s=1.5 * floor))  # fmt: skip
    lines = [x for x in findings(records) if "at the floor" in x]
    assert any("reverse(tensorflow)" in x and "600 us, x + 1 in TensorFlow (eager)" in x
               for x in lines)  # fmt: skip
    assert any("reverse(jax)" in x and "4 us, x + 1 in JAX (jitted)" in x for x in lines)
