"""The Lab's options (``Lab.n``, ``Lab.modes``...): properties that read and write the
same-named traits of its ``LabState``, so that code and widgets change one thing."""

from __future__ import annotations

from typing import Any


def _delegate(name: str, doc: str) -> property:
    def get(self: Any) -> Any:
        return getattr(self.state, name)

    def set_(self: Any, value: Any) -> None:
        setattr(self.state, name, value)

    return property(get, set_, doc=doc)


#: the Lab's options, each its state's trait of the same name, and what it does
OPTIONS = {
    "n": "The largest size of the sweep, and the n of the step-size curves.",
    "modes": "The modes to measure: any of forward, reverse, numeric, complex-step, hessian, hvp.",
    "compositions": "How hessian and hvp nest two modes: any of forward-over-reverse, "
    "reverse-over-forward, reverse-over-reverse, forward-over-forward, numeric, complex-step.",
    "sparse": '"dense", "sparse" (forward, reverse and Hessian from their sparsity pattern, '
    'on JAX) or "both".',
    "frameworks": "The frameworks to run them on: any of jax, numpy, torch, tensorflow, autograd.",
    "scheme": "The finite-difference scheme of numeric.",
    "jit": "None: each framework as its users run it (JAX jitted, the others eager); "
    "True: each framework's compiler; False: all eagerly.",
    "precision": '"float64" or "float32".',
    "device": "TF.js's backend for the TF.js series: cpu, wasm or webgl.",
    "jaxjs_device": "jax-js's backend for the jax-js series: wasm, cpu, webgl or webgpu.",
    "checkpoints": 'Reverse mode once per choice, for a model with loops: "false", "true", '
    '"sqrt" (checkpointing: less memory, more time).',
    "show_compile": "Whether the time plot shows compile times.",
    "model_name": "The model being edited (the dropdown).",
}


def delegate_options(cls: type) -> None:
    """Give the Lab class a property per option, reading and writing its state's trait."""
    for name, doc in OPTIONS.items():
        setattr(cls, name, _delegate(name, doc))
