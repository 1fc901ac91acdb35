"""The Lab's choice widgets: a checkbox per mode and per framework, and the jit choice.

A framework that is not installed is a greyed-out checkbox whose label and
tooltip give its pip command. Whether it is installed is asked of
``importlib.util.find_spec`` (``adlab.engine.backends.installed``), which
imports nothing: on Binder's 2 GB a framework is loaded only when a run uses it.
"""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as w
import traitlets

from ..engine.backends import KNOWN, installed, pip_command
from .traits import FRAMEWORK_CHOICES, MODE_CHOICES, LabTraits

_MODE_TEXT = {
    "forward": "forward",
    "reverse": "reverse",
    "numeric": "numeric",
    "complex-step": "complex step",
}
_MODE_TIPS = {
    "forward": "forward-mode AD (jax.jacfwd, torch.func.jacfwd, ForwardAccumulator): "
    "one pass per input",
    "reverse": "reverse-mode AD (jax.grad, torch.autograd.grad, GradientTape, autograd.grad): "
    "one pass per output",
    "numeric": "finite differences, with the scheme below, evaluated in the framework",
    "complex-step": "complex step (Squire & Trapp 1998): no cancellation error",
}
_FRAMEWORK_TIPS = {
    "jax": "JAX: traced, compiled by XLA (jax.jit)",
    "numpy": "plain NumPy: no AD, so finite differences and complex step only; "
    "the framework-free baseline",
    "torch": "PyTorch: a tape, run eagerly (torch.autograd.grad); jit: torch.compile",
    "tensorflow": "TensorFlow: tf.GradientTape, eager; jit: tf.function(jit_compile=True)",
    "autograd": "HIPS autograd: a tape over NumPy, with no compiler",
}
#: the jit choice: its buttons' text -> the ``jit`` trait's value
JIT_CHOICES = {"as usual": None, "jit": True, "eager": False}
_JIT_TIPS = (
    "each framework as its users run it: JAX jitted, the others eagerly",
    "each framework's compiler: jax.jit, torch.compile, tf.function(jit_compile=True); "
    "NumPy and autograd have none",
    "every framework eagerly, one call into it per operation",
)


def mode_boxes(state: LabTraits) -> dict[str, w.Checkbox]:
    """A checkbox per mode, ticked as ``state.modes``."""
    return {
        m: w.Checkbox(
            value=m in state.modes,
            description=_MODE_TEXT[m],
            indent=False,
            tooltip=_MODE_TIPS[m],
            layout=w.Layout(width="auto"),
        )  # fmt: skip
        for m in MODE_CHOICES
    }


def framework_box(name: str, ticked: bool) -> w.Checkbox:
    """The checkbox of one framework: greyed out, with its pip command, if not installed."""
    label = KNOWN[name].label
    if installed(name):
        return w.Checkbox(value=ticked, description=label, indent=False,
                          tooltip=_FRAMEWORK_TIPS[name], layout=w.Layout(width="auto"))  # fmt: skip
    command = pip_command(name)
    return w.Checkbox(value=False, description=f"{label} ({command})", indent=False,
                      disabled=True, tooltip=f"{label} is not installed here: {command}",
                      layout=w.Layout(width="auto"))  # fmt: skip


def framework_boxes(state: LabTraits) -> dict[str, w.Checkbox]:
    """A checkbox per framework, ticked as ``state.frameworks``."""
    return {f: framework_box(f, f in state.frameworks) for f in FRAMEWORK_CHOICES}


def link_boxes(boxes: dict[str, w.Checkbox], state: LabTraits, trait: str) -> None:
    """Keep ``state.<trait>`` (a list of names) and the ticks of ``boxes`` the same."""

    def ticked(_change: dict) -> None:
        setattr(state, trait, [name for name, box in boxes.items() if box.value])

    def chosen(change: dict) -> None:
        for name, box in boxes.items():
            box.value = name in change["new"]

    for box in boxes.values():
        box.observe(ticked, "value")
    state.observe(chosen, trait)


def jit_buttons(state: LabTraits) -> w.ToggleButtons:
    """The jit choice (as usual, jit, eager), linked to ``state.jit``."""
    names = list(JIT_CHOICES)
    buttons = w.ToggleButtons(options=names, value=_jit_text(state.jit), tooltips=list(_JIT_TIPS),
                              style={"button_width": "84px"})  # fmt: skip
    traitlets.link((buttons, "value"), (state, "jit"), transform=(JIT_CHOICES.get, _jit_text))
    return buttons


def _jit_text(value: bool | None) -> str:
    return next(text for text, v in JIT_CHOICES.items() if v is value)


def row(boxes: Sequence[w.Widget]) -> w.HBox:
    """Checkboxes side by side, wrapping when the column is narrow."""
    return w.HBox(list(boxes), layout=w.Layout(flex_flow="row wrap"))
