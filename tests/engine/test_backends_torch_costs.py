"""PyTorch's flop counts (``FlopCounterMode``): matrix products counted by hand.

The model below does two matrix-vector products and a dot product around an
elementwise tanh. FlopCounterMode counts matrix products only, 2 flops per
multiply-add, so with x of n, X of (2n, n) and W of (3, 2n):

- f: X @ w is 2 (2n) n, W @ t is 2 (3)(2n), dot(s, s) is 2 (3): 4n^2 + 12n + 6;
- the gradient: f, then the pull-backs of the two products towards w, X^T g
  (4n^2) and W^T g (12n); the dot's pull-back is 2 s g, elementwise, and X and
  W are data: 8n^2 + 24n + 6.

Internals: PyTorch's flop counter itself (torch.flops: count_flops, COUNTER, NOT_COUNTED)
against counts made by hand, and the XLA counter's name (measure.point.XLA_COUNTER) that
records carry; the public face is p.cost() and the records.
"""

from __future__ import annotations

import pytest

import adlab
from adlab.engine.backends.torch.flops import COUNTER
from adlab.measure.point import XLA_COUNTER

SOURCE = """
def setup(n, rng):
    return rng.normal(size=n), rng.normal(size=(2 * n, n)), rng.normal(size=(3, 2 * n))


def f(w, X, W):
    s = W @ np.tanh(X @ w)
    return np.dot(s, s)
"""
N = 5
PRIMAL = 4 * N**2 + 12 * N + 6
REVERSE = 8 * N**2 + 24 * N + 6

pytestmark = pytest.mark.filterwarnings("ignore::adlab.NoisyMachineWarning")


@pytest.fixture(scope="module")
def model() -> adlab.Model:
    return adlab.Model.from_source(SOURCE, name="products")


@pytest.mark.parametrize("jit", [False, True])
def test_the_count_is_the_matrix_products_by_hand(model, jit):
    args = model.setup(N)
    primal = adlab.prepare(model, *args, mode="primal", backend="torch", jit=jit).cost()
    grad = adlab.prepare(model, *args, mode="reverse", backend="torch", jit=jit).cost()
    assert primal == {"flops": PRIMAL, "counter": COUNTER}
    assert grad == {"flops": REVERSE, "counter": COUNTER}
    assert "matrix products" in COUNTER  # what it counts, said where the number is


def test_records_carry_the_counts_their_ratio_and_which_counter(model):
    records = list(adlab.bench(model, [N], ["reverse(torch)", "reverse"], reference=None,
                               repeats=3, target_s=0.002))  # fmt: skip
    torch_grad = next(r for r in records if r.label == "reverse(torch)")
    assert (torch_grad.flops, torch_grad.primal_flops) == (REVERSE, PRIMAL)
    assert torch_grad.flops_ratio == pytest.approx(REVERSE / PRIMAL)
    assert torch_grad.flops_counter == COUNTER
    assert torch_grad.dispatch is None  # JAX's CPU client's hand-off says nothing of PyTorch
    jax_grad = next(r for r in records if r.label == "reverse")
    assert jax_grad.flops_counter == XLA_COUNTER
    assert jax_grad.flops > REVERSE  # XLA counts the tanh and the elementwise work too


def test_a_call_that_fails_gives_no_count():
    from adlab.engine.backends.torch.flops import count_flops

    def fails(x):
        raise MemoryError("as jacfwd of a large net under the counter")

    assert count_flops(fails, 1.0) is None


def test_a_count_past_its_time_limit_is_given_up():
    """A dispatch mode makes each operation a Python call: a per-sample loop's count
    can take many times its call, so a sweep's count has a time limit."""
    import torch

    from adlab.engine.backends.torch.flops import count_flops

    a = torch.ones((4, 4), dtype=torch.float64)

    def two_products(x):
        return (a @ x) @ x

    assert count_flops(two_products, a, limit_s=None)["flops"] == 2 * (2 * 4 * 4 * 4)
    assert count_flops(two_products, a, limit_s=0.0) is None  # the second op is past it


def test_a_model_with_no_matrix_product_is_not_counted_not_free():
    """normal_logpdf is elementwise: FlopCounterMode counts nothing it knows. The record
    says so (flops None, the counter's reason), and the report reads "not counted", not 0."""
    from adlab.engine.backends.torch.flops import NOT_COUNTED
    from adlab.report import format_records

    m = adlab.load_model("normal_logpdf")
    records = list(adlab.bench(m, [N], ["reverse(torch)"], reference=None, repeats=3,
                               target_s=0.002))  # fmt: skip
    grad = next(r for r in records if r.label == "reverse(torch)")
    assert grad.flops is None and grad.flops_ratio is None
    assert grad.flops_counter == NOT_COUNTED and "not counted" in NOT_COUNTED
    row = next(line for line in format_records([grad]).splitlines() if "reverse(torch)" in line)
    assert "not counted" in row
