"""Complex step: f'(x) = Im f(x + ih) / h, exact to rounding for analytic f.

There is no subtraction, so h can be tiny (default 1e-20) and the result keeps
all digits. It is only right when f is analytic along the path. Functions that
compare (max, abs, sort, logaddexp, comparisons) compare the real parts and
carry the imaginary part along, as Martins, Sturdza and Alonso prescribe: the
model's ``np`` does so while complex step evaluates f
(``backends.real_part``). What stays non-analytic is what drops or bends the
imaginary part on its way to f's value: real, imag, conj, angle, a modulus
inside a library function (``np.linalg.norm``), floor and round; and what is
analytic on paper but whose complex arithmetic loses an imaginary part of 1e-20
(XLA's atan2 and convolution, which the real-part rules replace), or is not
analytic at all (singular values, eigh, qr, cholesky). So before building,
we trace f with a complex x and refuse if an operation not known to carry the
imaginary part exactly (``CARRIES``) touches a complex value and its result
reaches f's value; and, with a real x, if f computes with complex numbers of
its own (the step would mix into them). Where JAX cannot trace the model that another backend runs
(a list index), the result is flagged as unchecked, not refused in JAX's words.

References:
    Squire & Trapp, "Using complex variables to estimate derivatives of real
    functions", SIAM Review 40(1), 1998.
    Martins, Sturdza & Alonso, "The complex-step derivative approximation",
    ACM TOMS 29(3), 2003 (which operations need care).
"""

from __future__ import annotations

import re

import numpy as np

from ..._vocab import ModelError
from ..backends import DEFAULT, REFERENCE
from ..backends.complex_operators import operators as complex_operators
from ..backends.real_part import under_complex_step
from ..model.precision import COMPLEX
from ..model.userline import source_line
from ._perturb import to_jacobian
from ._registry import Built, Spec, Stepping, pick, register
from .analyticity import CARRIES as CARRIES  # the check's list, read by tests
from .analyticity import advice, find_non_analytic, refusal, users_words

DEFAULT_STEP = 1e-20


def _failed_at(exc: BaseException, files) -> int | None:
    """The model's line (deepest in ``files``) where ``exc`` was raised, or None."""
    tb, lineno = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename in files:
            lineno = tb.tb_lineno
        tb = tb.tb_next
    return lineno


def _no_complex(exc: BaseException, files) -> BaseException:
    """JAX's refusal of the complex x + ih (floor, mod, interp, quantile of complex
    numbers) as complex step's, at the model's line; other errors as they are."""
    text = str(exc)
    if isinstance(exc, ModelError) or "complex" not in text.lower():
        return exc
    lineno = _failed_at(exc, files)
    line = source_line(next(iter(files)), lineno) if files and lineno else None
    first = text.strip().splitlines()[0].rstrip(".")
    return ModelError(f"complex step evaluates f at the complex x + ih, which this line "
                      f"does not take ({type(exc).__name__}: {first})", lineno=lineno,
                      line=line, hint=advice(DEFAULT))  # fmt: skip


def _unchecked(exc: BaseException, files, backend: str) -> str:
    """Why f's analyticity was not checked: its JAX twin, which the check traces, failed
    where the model's own framework runs it (JAX's limits are not the model's)."""
    lineno = _failed_at(exc, files)
    where = f" line {lineno} of" if lineno else ""
    return (f"f's analyticity was not checked: adlab checks it by tracing f with JAX, which "
            f"cannot run{where} the model as written (a limit of JAX's, not the model's), "
            f"so complex step's result on {backend} was only compared with central "
            f"differences along one direction, at the first point")  # fmt: skip


def _against_differences(spec: Spec, args, i: int, jac, note: str) -> None:
    """Refuse if the complex-step Jacobian ``jac`` of argument i, times a fixed random
    direction v, disagrees with central differences of f along v: an operation that
    drops the imaginary part (``float(v)``, a cast to real) makes it 0 or a part of
    the derivative, far outside the differences' error (~eps^(2/3)). Two evaluations
    of f, once, where JAX could not trace f to check it line by line."""
    b = spec.impl
    x = np.asarray(b.to_numpy(args[i]))
    v = np.random.default_rng(0).standard_normal(x.shape).astype(x.dtype)
    eps = float(np.finfo(x.dtype).eps)
    d = eps ** (1 / 3) * max(1.0, float(np.max(np.abs(x), initial=0.0)))

    def at(sign: float) -> np.ndarray:
        moved = list(args)
        moved[i] = b.constant((x + sign * d * v).astype(x.dtype))
        out = spec.f(*moved)
        return np.ravel(np.asarray(b.to_numpy(out) if hasattr(out, "shape") else out))

    diff = (at(1.0) - at(-1.0)) / (2 * d)
    step = np.asarray(b.to_numpy(jac)).reshape(diff.size, -1) @ v.ravel()
    scale = max(float(np.linalg.norm(diff)), float(np.linalg.norm(step)))
    if np.linalg.norm(step - diff) <= 1e3 * eps ** (2 / 3) * scale:
        return
    lineno = int(m.group(1)) if (m := re.search(r"line (\d+) of", note)) else None
    line = source_line(next(iter(spec.files)), lineno) if spec.files and lineno else None
    where = f" (JAX, which checks f line by line, stops at line {lineno})" if lineno else ""
    raise ModelError(
        f"complex step disagrees with central differences along a direction "
        f"({float(np.linalg.norm(step)):.3g} against {float(np.linalg.norm(diff)):.3g}): "
        f"some operation in f drops the imaginary part of x + ih (float(v), a cast to "
        f"a real type){where}, so Im f(x + ih)/h is wrong",
        lineno=lineno, line=line, hint=advice(spec.backend))  # fmt: skip


def _one(spec: Spec, i: int, h: float, args, flat: bool = False):
    """Im f(x + ih e_j) / h for every coordinate j of argument i, on the spec's backend,
    in its complex type."""
    b = spec.impl
    xp = b.xp
    shape = np.shape(spec.args[i])
    xc = b.complex(xp.reshape(xp.asarray(args[i]), (-1,)), COMPLEX[np.dtype(spec.dtype).name])
    with complex_operators(spec.backend):  # PyTorch's and TensorFlow's x ** 3, A @ x
        F, _ = b.points(under_complex_step(spec.f), args, i, [xc + 1j * h], flat)
    return to_jacobian(xp.imag(F) / h, spec.out_shape, shape, xp)


def _at_step(spec: Spec, i: int, h, args):
    """(derivative, None) at complex step h: no estimate of its own."""
    return _one(spec, i, h, args), None


@register(
    "complex-step",
    summary="Im f(x + ih e_i) / h",
    # no subtraction, so no round-off arm: no optimal step, a fixed default
    stepping=Stepping({"complex-step": None}, _at_step, fixed_step=DEFAULT_STEP),
)
def complex_step(spec: Spec) -> Built:
    h = DEFAULT_STEP if spec.step is None else float(spec.step)
    if not h > 0:
        raise ValueError(f"complex-step needs a positive step, got {spec.step!r}")
    trusted, note = True, None
    if spec.f_jax is None:
        trusted, note = False, "f has no JAX twin, so its analyticity was not checked"
    else:
        for i in spec.indices:
            try:
                found = find_non_analytic(spec.f_jax, spec.args, i, spec.dtype, spec.files,
                                          spec.backend)  # fmt: skip
            except Exception as exc:  # noqa: BLE001 - any failure of JAX's, not the model's
                if spec.backend == REFERENCE:  # f ran on a real x: the complex one fails
                    raise _no_complex(exc, spec.files) from exc
                trusted, note = False, _unchecked(exc, spec.files, spec.backend)
                break
            if found:
                prim, where, eqns = found
                line = source_line(*where) if where else None
                words = users_words(prim, eqns, spec.files, line)
                message, hint = refusal(prim, i, words, spec.backend)
                raise ModelError(message, lineno=where[1] if where else None, line=line,
                                 hint=hint)  # fmt: skip

    unchecked = [not trusted and spec.f_jax is not None and not spec.jit]

    def make(flat):
        def fn(*args):
            jacs = [_one(spec, i, h, args, flat) for i in spec.indices]
            if unchecked[0]:  # no line-by-line check, so a check of the result, once passed
                for i, jac in zip(spec.indices, jacs, strict=True):
                    _against_differences(spec, args, i, jac, note)
                unchecked[0] = False
            return pick(jacs, spec.wrt)

        return fn

    chunked = any(spec.impl.n_chunks(spec.size(i), spec.size(i)) > 1 for i in spec.indices)
    n_in = sum(spec.size(i) for i in spec.indices)
    return Built(
        make(False), f_evals=n_in, trusted=trusted, note=note, step=h,
        cost_fn=make(True) if chunked else None, chunked=True,
    )  # fmt: skip
