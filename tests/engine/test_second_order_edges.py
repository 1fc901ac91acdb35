"""Second derivatives at the edges issue 23's fuzz found: right, never a raw error."""

from __future__ import annotations

import numpy as np
import pytest

import adlab


def _model(body: str) -> adlab.Model:
    return adlab.Model.from_source(
        f"def setup(n, rng):\n    return rng.normal(size=n),\ndef f(x):\n    return {body}\n"
    )


@pytest.mark.parametrize(("body", "n"), [
    ("np.sum(np.roll(x, 0) ** 3)", 3),      # a zero-size slice inside np.roll
    ("np.sum(np.cumprod(x))", 2),
    ("np.sum(x[2:] ** 2) + np.sum(x ** 3)", 2),  # x[2:] is empty at n = 2
])  # fmt: skip
def test_a_sparse_hessian_through_a_zero_size_intermediate(body, n):
    m = _model(body)
    (x,) = m.setup(n, 0)
    dense = adlab.hessian(m, x)
    sparse = adlab.hessian(m, x, sparse=True)
    np.testing.assert_allclose(sparse.toarray(), dense, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", ["reverse-over-forward", "forward-over-forward",
                                  "forward-over-reverse", "reverse-over-reverse"])  # fmt: skip
def test_torch_second_derivatives_of_a_linear_f_are_zero_arrays(mode):
    """torch.func hands back a ZeroTensor, which NumPy cannot take without force."""
    m = _model("np.sum(3 * x)")
    (x,) = m.setup(3, 0)
    h = adlab.hessian(m, x, mode=mode, backend="torch")
    v = adlab.hvp(m, x, np.ones(3), mode=mode, backend="torch")
    assert isinstance(h, np.ndarray) and isinstance(v, np.ndarray)
    np.testing.assert_array_equal(h, np.zeros((3, 3)))
    np.testing.assert_array_equal(v, np.zeros(3))
