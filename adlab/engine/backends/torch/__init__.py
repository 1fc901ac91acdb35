"""PyTorch: a tape, eager by default, with ``torch.func`` and ``torch.compile``.

``np`` is PyTorch's own functions under NumPy's names (``np.exp`` is
``torch.exp``: nothing runs per operation but PyTorch). Where NumPy's name is
missing or means something else, an alias fills it in, made once
(``_ALIASES``); the few whose NumPy meaning PyTorch has under no name
(``np.std`` divides by n, ``np.maximum(x, 0.0)`` takes a number, ``np.cumsum``
flattens) are ``array_api_compat``'s functions or a line here, and only their
callers pay a Python call for it. Functions that make float arrays get the
precision's dtype and the device (PyTorch would make float32 on the CPU).
``np.pi`` and ``np.e`` are PyTorch's, Python floats as NumPy's are; PyTorch's
functions take tensors, not Python numbers, but ``np.log(2 * np.pi)`` works, as
it is computed once when the model is built (``engine.model.folding``), not per call.

Reverse mode is ``torch.autograd.grad`` (as its users write it) for a scalar f
and ``torch.func.jacrev`` for a Jacobian; forward mode ``torch.func.jacfwd``;
perturbed points are evaluated by ``torch.func.vmap``. ``jit`` is
``torch.compile``, whose first call is the compile. ``Prepared.cost()`` is
``FlopCounterMode``'s count of matrix products (``flops``).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import array_api_compat.torch as xt
import numpy as np
import torch

from ...model.args import wrt_indices
from .. import _namespace, _numpy_meaning, _startup
from .._loops import python_loops
from ..base import Backend, batch_or_loop, tree_map, with_arg
from ..special import special_functions
from . import memory as _torch_memory  # noqa: E402
from . import numpy_meaning as _torch_numpy
from .flops import count_flops
from .remat import remat

_startup.triton_first()  # so that a later `import tensorflow` cannot crash torch.compile

with warnings.catch_warnings():
    # forward AD loads these on first use, and they warn of PyTorch's own use of its
    # deprecated torch.jit.script: loaded here, quietly, not inside a user's first jvp
    warnings.simplefilter("ignore", FutureWarning)
    try:
        import torch._decomp.decompositions_for_jvp  # noqa: F401
    except ImportError:  # pragma: no cover - a PyTorch that moved it
        pass

_DTYPES = {
    np.dtype(np.float32): torch.float32, np.dtype(np.float64): torch.float64,
    np.dtype(np.complex64): torch.complex64, np.dtype(np.complex128): torch.complex128,
}  # fmt: skip
#: evaluate a batch of perturbed points in chunks of about this many elements
CHUNK = 1 << 17


def _cumulative(op: Callable) -> Callable:
    def numpy_like(a: Any, axis: int | None = None, dtype: Any = None) -> Any:
        """NumPy's: over the flattened array when no axis is given."""
        return op(a.reshape(-1) if axis is None else a, 0 if axis is None else axis, dtype=dtype)

    return numpy_like


_ALIASES: dict[str, Any] = {
    "power": torch.pow, "fabs": torch.abs, "max": torch.amax, "min": torch.amin,
    "mod": torch.remainder, "around": torch.round, "rint": torch.round,
    "conjugate": torch.conj, "degrees": torch.rad2deg, "radians": torch.deg2rad,
    "copy": torch.clone, "expand_dims": torch.unsqueeze, "dot": torch.matmul,
    "split": torch.tensor_split, "array_split": torch.tensor_split,
    "repeat": torch.repeat_interleave, "identity": torch.eye,
    "full": xt.full, "eye": lambda n, m=None, k=0, **kw: xt.eye(n, m, k=k, **kw),
    # NumPy's meaning, which PyTorch's function of that name does not have
    "maximum": xt.maximum, "minimum": xt.minimum, "std": xt.std, "var": xt.var,
    "flip": xt.flip, "tensordot": xt.tensordot, "sort": xt.sort, "argsort": xt.argsort,
    "cumsum": _cumulative(torch.cumsum), "cumprod": _cumulative(torch.cumprod),
}  # fmt: skip
#: PyTorch's functions whose NumPy namesake means something else, and none is at hand
_DROP = ("transpose",)


def _numpy_like(dtype: torch.dtype, device: torch.device) -> dict[str, Any]:
    """NumPy's functions that take numbers and lists beside tensors (``numpy_meaning``)."""
    beside = {name: getattr(torch, name) for name in _torch_numpy.BINARY}
    beside["equal"] = torch.eq  # torch.equal: whether two tensors are equal, one bool
    array = _torch_numpy.array_maker(_dtype, dtype, device)
    return {**{k: _torch_numpy.numbers_beside(fn, dtype, device) for k, fn in beside.items()},
            "array": array, "asarray": array}  # fmt: skip


def _map(fn: Callable, xs: Any) -> Any:
    return torch.stack([fn(x) for x in xs])


def _vmap(fn: Callable, xs: Any) -> Any:
    return torch.func.vmap(fn)(xs)


def _dtype(d: Any) -> torch.dtype:
    """PyTorch's dtype for a NumPy one (``int``, ``np.float32``, "float32")."""
    if isinstance(d, torch.dtype):
        return d
    return torch.from_numpy(np.empty(0, dtype=np.dtype(d))).dtype


def _tensor(a: Any, device: torch.device) -> Any:
    if isinstance(a, (np.ndarray, np.generic)):
        return torch.as_tensor(a, device=device)
    return a


class TorchBackend(Backend):
    name = "torch"
    namespace_per_precision = True
    xp = xt

    def __init__(self) -> None:
        with warnings.catch_warnings():
            # a failed probe (no driver, or TensorFlow's own failed probe before it) warns;
            # it means what it returns: no GPU, the CPU
            warnings.simplefilter("ignore", UserWarning)
            cuda = torch.cuda.is_available()
        self.device = torch.device("cuda" if cuda else "cpu")
        _startup.quiet_torch(cuda)

    def environment(self) -> dict[str, Any]:
        dev = str(self.device)
        if self.device.type == "cuda":
            dev += f": {torch.cuda.get_device_name(self.device)}"
        return {"version": torch.__version__, "device": dev}

    @functools.cache  # noqa: B019 - one namespace per precision, for the process
    def namespace(self, precision: str) -> dict[str, Any]:
        dtype = _DTYPES[np.dtype(precision)]
        defaults = {"dtype": dtype, "device": self.device}
        aliases = {**_ALIASES, **_numpy_like(dtype, self.device)}
        ns = _namespace.build("torch", torch, aliases=aliases,
                              creators=_namespace.CREATORS, creator_defaults=defaults,
                              drop=_DROP, dtype_of=_dtype)  # fmt: skip
        # PyTorch's median takes the lower middle value; its take has no axis and no list;
        # its sinc's second derivative at 0 is 0 or NaN (-pi**2 / 3)
        _numpy_meaning.install(ns, ("median", "sinc", "take"))
        return {"np": ns, "map_samples": _map, "vmap_samples": _vmap, **_LOOPS,
                **special_functions("torch", ns)}  # fmt: skip

    # ---------------------------------------------------------------- data
    def convert(self, args: tuple, precision: str) -> tuple:
        return tree_map(lambda a: _tensor(a, self.device), tuple(args))

    def to_numpy(self, tree: Any) -> Any:
        if isinstance(tree, (tuple, list)):
            return tuple(self.to_numpy(t) for t in tree)
        if isinstance(tree, torch.Tensor):
            # force: also a ZeroTensor (a linear f's second derivative) and a negated view
            return tree.numpy(force=True)
        return None if tree is None else np.asarray(tree)

    def constant(self, array: np.ndarray) -> Any:
        return torch.as_tensor(array, device=self.device)

    def complex(self, x: Any, dtype: Any) -> Any:
        return x.to(_DTYPES[np.dtype(dtype)])

    def peak(self, call: Callable, x: Any, compiled: Any) -> tuple[float | None, str]:
        return _torch_memory.peak(call, x, self.device)

    def residuals(self, f: Callable, inputs: tuple,
                  wrt: tuple[int, ...]) -> tuple[float | None, str]:  # fmt: skip
        # f with NumPy's meaning on tensors (x.size, slicing), as its calls run (_bind)
        return _torch_memory.residuals(_torch_numpy.GUARD.around(f), inputs, wrt)

    # ------------------------------------------------------- AD operators
    def gradient(self, f: Callable, wrt: int | tuple[int, ...], jit: bool) -> Callable:
        """``torch.autograd.grad``, as its users write it. The prepared inputs are
        marked ``requires_grad`` once (``program``); another x is detached and marked."""
        idx = wrt_indices(wrt)

        def grad(*args: Any) -> Any:
            args = list(args)
            for i in idx:
                if not args[i].requires_grad:
                    args[i] = args[i].detach().requires_grad_()
            y = f(*args)
            if not getattr(y, "requires_grad", False):  # f does not depend on x: 0
                out = tuple(torch.zeros_like(args[i]) for i in idx)
            else:
                xs = [args[i] for i in idx]
                gs = torch.autograd.grad(y, xs, allow_unused=True)
                out = tuple(_or_zero(g, x) for g, x in zip(gs, xs, strict=True))
            return out if isinstance(wrt, tuple) else out[0]

        if idx == (0,) and not isinstance(wrt, tuple):

            def grad(x: Any, *rest: Any) -> Any:  # noqa: F811 - the common case, written out
                if not x.requires_grad:
                    x = x.detach().requires_grad_()
                y = f(x, *rest)
                if not getattr(y, "requires_grad", False):  # f does not depend on x: 0
                    return torch.zeros_like(x)
                # an x that y does not use has a zero derivative (TensorFlow's ZERO)
                return _or_zero(torch.autograd.grad(y, x, allow_unused=True)[0], x)

        grad.grad_args = idx  # type: ignore[attr-defined]
        return grad

    def jacobian(self, f: Callable, wrt: int | tuple[int, ...], forward: bool, jit: bool):
        return (torch.func.jacfwd if forward else torch.func.jacrev)(f, argnums=wrt)

    # torch.func's transforms, not the tape: they nest (a tape's double backward would
    # give only reverse-over-reverse), eagerly and under torch.compile
    def pushforward(self, f: Callable, x: Any, v: Any) -> tuple[Any, Any]:
        return torch.func.jvp(f, (x,), (v,))

    def pullback(self, f: Callable, x: Any, w: Any) -> tuple[Any, Any]:
        y, pull = torch.func.vjp(f, x)
        return y, pull(w)[0]

    # -------------------------------------------------- perturbed points
    def points(self, f: Callable, args: Sequence[Any], i: int, blocks: list, flat: bool):
        """``torch.func.vmap`` of f over the batch, built by one select per chunk.

        Complex points (complex step) meet the other arguments as complex too:
        PyTorch's matrix products do not promote real to complex as NumPy's do.
        """
        x = args[i]
        coords = torch.cat(blocks)
        if coords.is_complex():
            args = _complex_args(args, coords.dtype)
        xf = x.reshape(-1).to(coords.dtype)
        k, n = coords.shape[0], xf.shape[0]
        one = with_arg(f, args, i, tuple(x.shape))
        at = torch.func.vmap(one)

        def looped(X: Any) -> Any:
            return _stack_values([one(row) for row in X], X.dtype)

        rows = k if flat else max(1, CHUNK // max(n, 1))
        out = []
        for start in range(0, k, rows):
            stop = min(k, start + rows)
            rows_moved = torch.arange(start, stop, device=self.device) % n  # see hit_mask
            mask = rows_moved[:, None] == torch.arange(n, device=self.device)[None, :]
            X = torch.where(mask, coords[start:stop, None], xf[None, :])
            out.append(batch_or_loop(f, at, looped, X))
        return (out[0] if len(out) == 1 else torch.cat(out)), coords

    # --------------------------------------------------------- the call
    def compile(self, fn: Callable) -> Callable:
        _startup.check_compile_order()  # a clear refusal, not a segmentation fault
        return torch.compile(fn)

    def program(self, built: Any, inputs: tuple, args: tuple, *, jit: bool, precision: str,
                guard: Callable):  # fmt: skip
        for i in getattr(built.fn, "grad_args", ()):  # ours, fresh from convert
            inputs[i].requires_grad_()
        with warnings.catch_warnings():
            # torch.compile's first call warns of PyTorch's own internals (deprecations)
            warnings.simplefilter("ignore", FutureWarning)
            prog = super().program(built, inputs, args, jit=jit, precision=precision,
                                   guard=guard)  # fmt: skip
        # counted on the eager function, once, when asked for (see flops.py)
        eager = self._bind(built.fn, inputs[1:])
        prog.cost = functools.cache(lambda: count_flops(eager, inputs[0]))
        return prog

    def probe(self, f: Callable, args: tuple, inputs: tuple, jit: bool, guard: Callable) -> Any:
        with _torch_numpy.GUARD:
            return super().probe(f, args, inputs, jit, guard)

    def _bind(self, fn: Callable, rest: tuple) -> Callable:
        """The call with NumPy's slicing and ``x.size`` on tensors, and no silent constant
        from ``float(v)`` (``_torch_numpy.GUARD``), while it runs eagerly. Not around
        ``torch.compile``'s function: its tracer fails on a swapped ``Tensor`` method."""
        call = super()._bind(fn, rest)
        if getattr(fn, "_torchdynamo_orig_callable", None) is not None:
            return call
        return _torch_numpy.GUARD.around(call)

    def needs_wait(self) -> bool:
        return self.device.type == "cuda"

    def wait(self, out: Any) -> Any:
        torch.cuda.synchronize(self.device)
        return out


_LOOPS = python_loops(torch.stack, remat, "torch")


def _or_zero(g: Any, x: Any) -> Any:
    """``g``, or x's zero derivative where y did not use x (``allow_unused``'s None):
    what ``materialize_grads=True`` gives, without its Python pass over the results (5% of
    a small gradient's call, measured against ``torch.autograd.grad`` by hand)."""
    return torch.zeros_like(x) if g is None else g


def _stack_values(values: list, dtype: torch.dtype) -> Any:
    """f's values at the points, stacked; a Python number (``return float(...)``) as a
    tensor of the points' dtype (``torch.stack`` takes only tensors)."""
    return torch.stack([v if isinstance(v, torch.Tensor) else torch.as_tensor(v, dtype=dtype)
                        for v in values])  # fmt: skip


def _complex_args(args: Sequence[Any], dtype: torch.dtype) -> list:
    def cast(a: Any) -> Any:
        return a.to(dtype) if isinstance(a, torch.Tensor) and a.is_floating_point() else a

    return tree_map(cast, list(args))


BACKEND = TorchBackend()
