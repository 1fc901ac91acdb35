"""A model that imports or calls a framework itself: found in its source, refused at that line.

adlab binds ``np`` to each framework's NumPy-like namespace; a model that imports
``torch`` or writes ``tf.reduce_sum`` would run one framework's code under another's
AD (and JAX's checks), so it is refused with the line and what to write instead
(``explain``'s sibling: that module reads exceptions, this one reads the source).
"""

from __future__ import annotations

import ast

from ..backends.facts import BASELINE, DEFAULT, FACTS
from .explain import framework_label

#: a framework's top-level module -> the backend that binds np to it
_FRAMEWORK_MODULES = {module: name for name, f in FACTS.items() for module in f.imports}
#: the names people give the frameworks in their code (``import tensorflow as tf``)
_FRAMEWORK_NAMES = {
    **_FRAMEWORK_MODULES,
    **{alias: name for name, f in FACTS.items() for alias in f.aliases},
}


def np_imports(tree: ast.Module) -> list[int]:
    """Line numbers of imports that bind the name ``np``, which adlab provides."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if any((a.asname or a.name.split(".")[0]) == "np" for a in node.names):
                lines.append(node.lineno)
    return lines


def _bound_names(tree: ast.Module) -> set[str]:
    """Every name the model's own code binds (assigned, defined, an argument, imported)."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name.split(".")[0]) for a in node.names)
    return bound


def framework_uses(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, backend) of each import of a framework, and of each use of a framework's
    usual name (``torch``, ``tf``, ``jnp``...) that the model does not bind itself."""
    found, aliases = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                backend = _FRAMEWORK_MODULES.get(a.name.split(".")[0])
                if backend:
                    found.append((node.lineno, backend))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            backend = _FRAMEWORK_MODULES.get(node.module.split(".")[0])
            if backend:
                found.append((node.lineno, backend))
    bound = _bound_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            backend = _FRAMEWORK_NAMES.get(node.id)
            if backend and node.id not in bound and node.id not in aliases:
                aliases[node.id] = backend
                found.append((node.lineno, backend))
    return sorted(found)


def _dotted(node: ast.expr) -> list[str] | None:
    """``torch.linalg.norm`` as ["torch", "linalg", "norm"]; None if not names and dots."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return [node.id, *reversed(parts)] if isinstance(node, ast.Name) else None


def _numpy_name(parts: list[str]) -> str | None:
    """NumPy's name for a framework's ``parts`` after its module (``["numpy", "sum"]``,
    ``["linalg", "norm"]``), or None where NumPy has none."""
    import numpy

    parts = [*parts[:-1], parts[-1].removeprefix("reduce_")] if parts else parts  # TF's
    for k in range(len(parts)):
        obj = numpy
        for part in parts[k:]:
            obj = getattr(obj, part, None)
        if obj is not None and callable(obj):
            return "np." + ".".join(parts[k:])
    return None


def _framework_call(tree: ast.Module, backend: str) -> list[str] | None:
    """The first name the model reads off one of ``backend``'s names, dotted
    (``["torch", "sum"]``), else None."""
    names = {n for n, b in _FRAMEWORK_NAMES.items() if b == backend}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(
                a.asname or a.name.split(".")[0]
                for a in node.names
                if _FRAMEWORK_MODULES.get(a.name.split(".")[0]) == backend
            )
        elif isinstance(node, ast.ImportFrom) and node.module:
            if _FRAMEWORK_MODULES.get(node.module.split(".")[0]) == backend:
                names.update(a.asname or a.name for a in node.names)
    chains = [(node.lineno, node.col_offset, -len(parts), parts) for node in ast.walk(tree)
              if isinstance(node, ast.Attribute) and (parts := _dotted(node))
              and parts[0] in names]  # fmt: skip
    return min(chains)[3] if chains else None


def beside_np() -> frozenset[str]:
    """The names adlab gives a model beside ``np`` (``fori_loop``, ``logsumexp``...)."""
    from ..backends import get_backend

    return frozenset(get_backend(BASELINE).namespace("float64")) - {"np"}


def framework_refusal(tree: ast.Module, backend: str, line: str,
                      pick: str | None) -> tuple[str, str]:  # fmt: skip
    """(message, hint) for a model that imports or names a framework (``framework_uses``)
    on ``line``: adlab binds ``np`` to it instead. ``pick``: how the user's interface
    picks the framework (``userline.remedy("framework")``), or None."""
    label = framework_label(backend)
    stripped = line.strip()
    imports = stripped.startswith(("import ", "from "))
    ours = (
        "jax.numpy when JAX runs it, the default"
        if backend == DEFAULT
        else (f"{label}'s when {label} runs it")
    )
    message = (
        f"the model {'imports' if imports else 'calls'} {label} itself, but adlab binds "
        f"np to the NumPy-like namespace of the framework that runs the model ({ours}), "
        f"so that one text runs under every backend"
    )
    call = _framework_call(tree, backend)
    wrote = ".".join(call) if call else None
    ours = _numpy_name(call[1:]) if call else None
    if ours:
        write = f"write {ours}(...) in place of {wrote}(...)"
    elif call and call[-1] in beside_np():
        write = f"write {call[-1]}(...), which adlab provides beside np, in place of {wrote}(...)"
    else:
        write = "write it with np's NumPy names (np.sum, np.exp, np.linalg.norm, ...)"
    hint = write + (f", remove `{stripped}`," if imports else ",")
    if pick:
        hint += " and pick the framework with " + pick.format(backend=backend, label=label)
    else:
        hint += " and leave np to adlab"
    return message, hint
