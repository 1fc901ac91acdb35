"""A model's gradient written out as a standalone JavaScript ES module, for a web page.

What the module holds and how it is emitted: ``adlab.engine.backends.js.export``.
Here a model is named as elsewhere in adlab's API (a catalog name, a model file's path,
source text or a ``Model``), at the size its ``setup`` is called with.
"""

from __future__ import annotations

from typing import Any

from ..catalog import resolve_model
from ..engine.backends.js import export
from ..engine.backends.js.export_programs import check_mode
from ..engine.model.source import Model

#: the size a module is set up at where none is given
DEFAULT_N = 10


def _call(model: str | Model, mode: str, n: int, hvp: bool, fixed: bool, options: dict) -> str:
    """The Python call that made a module, for its header (the CLI gives its command)."""
    name = model if isinstance(model, str) else getattr(model, "name", "model")
    extra = "".join(f", {k}={v!r}" for k, v in options.items())
    hv = ", hvp=True" if hvp else ""
    fx = ", fixed=True" if fixed else ""
    return f"adlab.export_js({name!r}, mode={mode!r}, n={n}{hv}{fx}{extra})"


def export_js(
    model: str | Model,
    mode: str = "reverse",
    n: int | None = None,
    *,
    hvp: bool = False,
    fixed: bool = False,
    seed: int = 0,
    command: str | None = None,
    **options: Any,
) -> str:
    """The source of one JavaScript ES module holding f and its gradient, for a web page.

    The module exports ``f``, ``grad`` and ``valueAndGrad`` (and ``hvp`` with
    ``hvp=True``). Each takes ``Float64Array``\\ s: f's arguments in the model's order
    (x, then the data ``setup`` returns; a dict's arrays by sorted key), each flattened
    row-major. ``f`` returns a number; ``grad`` a new ``Float64Array`` at each call;
    ``valueAndGrad`` ``[value, grad]`` (as JAX's and jax-js's ``value_and_grad``);
    ``hvp(x, v, ...data)`` the Hessian times ``v``. The module imports nothing and holds
    its constants exactly, so it runs in Node, a bundler or a page's
    ``<script type="module">``. Where JAX traces the model at a symbolic n, it takes any n
    (from the least its header names: n is read from an argument's length); otherwise, or
    with ``fixed=True``, it is built for the shapes at ``n``. An argument of another length
    throws an ``Error`` that names the expected shape. Each block of its code carries the
    model's line as a comment.

    Args:
        model: a catalog name, a model file's path, model source, or a ``Model``.
        mode: "reverse" (JAX's VJP program, one pass) or "forward" (the JVP program, a
            pass per input).
        n: the size ``setup`` is called with (default 10): the module's, where it is built
            for one n.
        hvp: also export ``hvp`` (forward over reverse).
        fixed: build the module for ``n`` alone, even where the model traces at any n.
        seed: the seed of ``setup`` (its data only set the shapes; the module takes data).
        command: the command named in the header (default: this call).
        **options: new values for the model's settings, as ``load_model``'s.

    Returns:
        The module's source.

    Raises:
        ModelError: the model cannot be exported: mode "complex-step" or "numeric", an
            operation with no JavaScript translation (at its line), a vector f.
        ValueError: an unknown mode.

    Example:
        >>> source = adlab.export_js("rosenbrock", n=3)
        >>> "export function grad(x)" in source
        True
    """
    return _written(export.module, model, mode, n, hvp, fixed, seed, command, options)


def export_dts(
    model: str | Model,
    mode: str = "reverse",
    n: int | None = None,
    *,
    hvp: bool = False,
    fixed: bool = False,
    seed: int = 0,
    command: str | None = None,
    **options: Any,
) -> str:
    """The TypeScript declarations (``.d.ts``) of ``export_js``'s module, same arguments.

    Returns:
        The declarations' source: one ``export declare function`` per export.

    Example:
        >>> print(adlab.export_dts("rosenbrock", n=3).splitlines()[-2])
        /** [f, its gradient], from one pass. */
    """
    return _written(export.declarations, model, mode, n, hvp, fixed, seed, command, options)


def _written(write: Any, model: str | Model, mode: str, n: int | None, hvp: bool, fixed: bool,
             seed: int, command: str | None, options: dict) -> str:  # fmt: skip
    """``write`` (the module's or its declarations' text) for the model as the user named it."""
    n = DEFAULT_N if n is None else n
    check_mode(mode)  # before the model is built: a wrong mode says so at once
    built = resolve_model(model, **options)
    return write(built, mode, n, hvp=hvp, seed=seed, fixed=fixed,
                 command=command or _call(model, mode, n, hvp, fixed, options))  # fmt: skip
