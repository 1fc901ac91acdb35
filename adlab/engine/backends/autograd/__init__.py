"""HIPS autograd: a pure tape over NumPy, with no compiler.

``np`` is ``autograd.numpy``, NumPy's functions wrapped so the tape sees them.
Reverse mode is ``autograd.grad`` / ``autograd.jacobian`` (rows), forward mode
autograd's own ``make_jvp`` (a forward trace of JVP nodes, not the
reverse-of-reverse trick of ``make_jvp_reversemode``), one tangent per input.
Perturbed points are evaluated as NumPy's backend does, one coordinate at a
time: autograd has no vmap, and on plain arrays its functions are NumPy's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import autograd
import autograd.numpy as anp
import numpy as np
from autograd.differential_operators import make_jvp, make_vjp

from ...model.args import wrt_indices
from .. import _namespace, _numpy_meaning
from .._loops import python_loops
from ..base import Backend
from ..numpy import numpy_batch
from ..special import special_functions
from . import memory as _autograd_memory  # noqa: E402


def _svdvals(a: Any) -> Any:
    return anp.linalg.svd(a, compute_uv=False)


def _map(fn: Callable, xs: Any) -> Any:
    return anp.stack([fn(x) for x in xs])


def _version() -> str | None:
    from importlib.metadata import version

    return version("autograd")


class AutogradBackend(Backend):
    name = "autograd"
    namespace_per_precision = True  # np.linspace and the other array makers
    xp = anp
    chunked_forward = True  # forward mode pushes one tangent at a time

    def environment(self) -> dict[str, Any]:
        return {"version": _version(), "device": "cpu"}

    @functools.cache  # noqa: B019 - one namespace per precision, for the process
    def namespace(self, precision: str) -> dict[str, Any]:
        ns = _namespace.build("autograd", anp, creators=_namespace.CREATORS,
                              creator_defaults=_namespace.float32_defaults(precision))  # fmt: skip
        # NumPy's functions where autograd has no rule (median, most norms) or one that
        # divides by zero where NumPy's function is smooth (prod, sinc, std, norm inf)
        _numpy_meaning.install(ns, ("median", "norm", "prod", "sinc", "std", "take"),
                               svdvals=_svdvals, sort_rows=True)  # fmt: skip
        return {"np": ns, "map_samples": _map, "vmap_samples": _map, **_LOOPS,
                **special_functions("autograd", ns)}  # fmt: skip

    def residuals(self, f: Callable, inputs: tuple,
                  wrt: tuple[int, ...]) -> tuple[float | None, str]:  # fmt: skip
        return _autograd_memory.residuals(f, inputs, wrt)

    def gradient(self, f: Callable, wrt: int | tuple[int, ...], jit: bool) -> Callable:
        return autograd.grad(f, wrt)

    def jacobian(self, f: Callable, wrt: int | tuple[int, ...], forward: bool, jit: bool):
        idx = wrt_indices(wrt)

        def jac(*args: Any) -> Any:
            out = [(_forward if forward else _reverse)(f, args, i) for i in idx]
            return tuple(out) if isinstance(wrt, tuple) else out[0]

        return jac

    # autograd traces through its own operators, so these nest
    def pushforward(self, f: Callable, x: Any, v: Any) -> tuple[Any, Any]:
        return make_jvp(f)(x)(v)

    def pullback(self, f: Callable, x: Any, w: Any) -> tuple[Any, Any]:
        pull, y = make_vjp(f)(x)
        return y, pull(w)

    def points(self, f: Callable, args: Sequence[Any], i: int, blocks: list, flat: bool):
        F = numpy_batch(f, args, i, np.stack(blocks, axis=1))
        return F, np.concatenate(blocks)


def _reverse(f: Callable, args: tuple, i: int) -> Any:
    return autograd.jacobian(f, i)(*args)


def _forward(f: Callable, args: tuple, i: int) -> Any:
    """Columns: one JVP pass per input, along each unit vector."""
    x = np.asarray(args[i])
    push = make_jvp(f, i)(*args)
    basis = np.eye(x.size, dtype=x.dtype)
    cols = [push(e.reshape(x.shape))[1] for e in basis]
    out = np.moveaxis(np.stack([np.asarray(c) for c in cols]), 0, -1)  # (*out, n)
    return out.reshape((*out.shape[:-1], *x.shape))


_LOOPS = python_loops(anp.stack, name="autograd")
BACKEND = AutogradBackend()
