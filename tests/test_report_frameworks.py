"""The text table names each framework its records ran on, with its version."""

from __future__ import annotations

from adlab import Record, format_table
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
