"""Tutorial 08's readings (adlab.tutorial.memory): the chain's memory rows and their facts,
and a checkpointing sweep read against plain reverse mode, on hand-made rows and records
(and one small measurement on JAX, whose compiled figures are XLA's buffer assignment)."""

from __future__ import annotations

import numpy as np
import pytest

import adlab
from adlab import Record
from adlab.tutorial import memory

N = 1_000
MB = 1e6


def _row(mode: str, k: int, peak: float, residual: float | None, program: str = "unrolled"):
    return memory.MemoryRow("torch", mode, 0, k, N, program, peak, residual, "a counter")


def test_the_chain_unrolled_and_as_a_loop_gives_the_same_gradient():
    args = memory.chain(5).setup(30)
    unrolled = adlab.derivative(memory.chain(5), *args, wrt=1, check=False)
    looped = adlab.derivative(memory.chain(5, loop=True), *args, wrt=1, check=False)
    np.testing.assert_allclose(looped, unrolled, rtol=1e-12)


def test_jax_rows_say_the_fused_gradient_holds_only_itself_and_the_loop_its_steps():
    ks = (4, 16)
    rows = memory.tape_rows(["jax"], ["reverse"], ks, N, wrt=1)
    rows += memory.tape_rows(["jax"], ["reverse"], ks, N, wrt=1, loop=True,
                             checkpoints=[None, "sqrt"])  # fmt: skip
    facts = memory.tape_facts(rows)
    assert facts.columns[2] == "program"
    by = {row[2]: row[3:] for row in facts.rows}
    assert by["unrolled"] == ("2", "yes", "no")  # jax.vjp's two arrays; XLA's peak stays
    assert by["fori_loop"][1:] == ("yes", "yes")
    assert by["fori_loop, checkpoint=sqrt"] == ("< 1", "no", "no")
    table = memory.tape_table(rows)
    assert "jax.vjp" in "\n".join(table.notes)
    assert table.rows[0][-1] == "1.00"  # the fused peak: the gradient's n float64


def test_forward_keeps_none_and_reverse_grows_as_k():
    rows = [_row("forward", 10, 5 * MB, None), _row("reverse", 10, 10 * MB, 8e4),
            _row("forward", 40, 5 * MB, None), _row("reverse", 40, 34 * MB, 3.2e5)]  # fmt: skip
    facts = memory.tape_facts(rows)
    assert facts.columns == ("framework", "mode", "arrays kept a step", "residuals grow as k",
                             "peak grows as k")  # fmt: skip
    assert facts.rows == (("PyTorch", "forward", "none", "-", "no"),
                          ("PyTorch", "reverse", "1", "yes", "yes"))  # fmt: skip
    table = memory.tape_table(rows)
    assert table.rows[1][3:] == ("10 MB", "80 KB", "1.00", "1250.00")
    assert table.rows[0][4:6] == ("-", "-")


def test_growth_like_sqrt_k_is_not_growth_as_k():
    rows = [_row("reverse", 10, 1 * MB, 2.4e4, "fori_loop, checkpoint=sqrt"),
            _row("reverse", 40, 1.9 * MB, 4.8e4, "fori_loop, checkpoint=sqrt")]  # fmt: skip
    assert memory.tape_facts(rows).rows[0][3:] == ("< 1", "no", "no")


def _rec(label: str, backend: str, n: int, time_s: float, peak: float, residual: float,
         error: float = 0.0) -> Record:  # fmt: skip
    return Record(model="ode", mode="reverse", n=n, label=label, scheme=None, jit=True,
                  precision="float64", backend=backend, median_s=time_s, peak_bytes=peak,
                  residual_bytes=residual, error=error)  # fmt: skip


def _sweep() -> list[Record]:
    return [
        _rec("reverse", "jax", 100, 1e-3, 3.3e5, 3.2e5),
        _rec("reverse(checkpoint=true)", "jax", 100, 2e-3, 8.8e4, 8e4),
        _rec("reverse(checkpoint=sqrt)", "jax", 100, 1.5e-3, 4.7e4, 8e3),
        _rec("reverse(torch)", "torch", 100, 0.02, 3.3e5, 3.2e5),
        _rec("reverse(torch,checkpoint=true)", "torch", 100, 0.07, 6.1e5, 5.9e5, 1e-15),
        _rec("reverse(torch,checkpoint=sqrt)", "torch", 100, 0.05, 1.1e5, 6.7e4, 1e-9),
    ]


def test_the_checkpoint_table_reads_each_series_against_plain_reverse():
    t = memory.checkpoint_table(_sweep())
    rows = {(r[0], r[2]): r for r in t.rows}
    assert rows[("JAX", "none")][4::2] == ("1x", "1x", "1x")
    assert rows[("JAX", "each step")][3:] == ("2 ms", "2x", "88 KB", "0.27x", "80 KB", "0.25x")
    assert rows[("PyTorch", "sqrt")][8] == "0.21x"


def test_the_checkpoint_facts_say_what_holds():
    t = memory.checkpoint_facts(_sweep())
    assert t.rows == (
        ("JAX", "each step", "yes", "no", "yes"),
        ("JAX", "sqrt", "yes", "yes", "yes"),
        ("PyTorch", "each step", "no", "no", "yes"),
        ("PyTorch", "sqrt", "yes", "yes", "no"),  # an error of 1e-9 is not the same derivative
    )
    assert t.title.startswith("n = 100:")


def test_the_limit_falls_between_the_two_peaks():
    limit = memory.limit_between(_sweep(), 100, fits="reverse(checkpoint=true)", past="reverse")
    assert 8.8e4 < limit < 3.3e5
    assert limit == 1.7e5  # the geometric mean (1.704e5), to two figures
    with pytest.raises(ValueError, match="not below"):
        memory.limit_between(_sweep(), 100, fits="reverse", past="reverse(checkpoint=true)")
