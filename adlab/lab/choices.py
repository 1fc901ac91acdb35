"""The Lab's choice widgets: a checkbox per mode, composition and framework; jit; sparse.

A framework that is not installed is a greyed-out checkbox whose label and
tooltip give its pip command. So is a mode none of the ticked frameworks runs
(second order on NumPy alone), a composition no ticked mode takes, and the
sparse choice where no ticked framework has one: the label says what to tick,
the tooltip why (``modes``'s refusals, updated as the ticks change).

Whether a framework is installed is asked of ``importlib.util.find_spec``
(``adlab.engine.backends.installed``), which imports nothing: on Binder's 2 GB a
framework is loaded only when a run uses it.
"""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as w
import traitlets

from ..engine.backends import KNOWN, installed, pip_command
from .modes import (
    CHECKPOINT_CHOICES,
    COMPOSITION_CHOICES,
    SPARSE_CHOICES,
    Refusal,
    checkpoint_refusal,
    composition_refusal,
    mode_refusal,
    sparse_refusal,
)
from .traits import FRAMEWORK_CHOICES, MODE_CHOICES, LabTraits

_MODE_TEXT = {
    "forward": "forward",
    "reverse": "reverse",
    "numeric": "numeric",
    "complex-step": "complex step",
    "hessian": "Hessian",
    "hvp": "HVP",
}
_MODE_TIPS = {
    "forward": "forward-mode AD (jax.jacfwd, torch.func.jacfwd, ForwardAccumulator): "
    "one pass per input",
    "reverse": "reverse-mode AD (jax.grad, torch.autograd.grad, GradientTape, autograd.grad): "
    "one pass per output",
    "numeric": "finite differences, with the scheme below, evaluated in the framework",
    "complex-step": "complex step (Squire & Trapp 1998): no cancellation error",
    "hessian": "the full Hessian, in each ticked composition (n HVPs; jax.hessian is "
    "forward-over-reverse)",
    "hvp": "the Hessian times a vector v, in each ticked composition: a small constant "
    "times f (Pearlmutter 1994)",
}
_COMPOSITION_TIPS = {
    "forward-over-reverse": "the JVP of the reverse gradient (jax.hessian): one pass per HVP",
    "reverse-over-forward": "the VJP of a JVP of f",
    "reverse-over-reverse": "the VJP of the reverse gradient",
    "forward-over-forward": "the JVP of the forward gradient: n JVPs of f per HVP",
    "numeric": "central differences of the reverse gradient (not of f)",
    "complex-step": "complex step of the reverse gradient, for an analytic f: the full "
    "Hessian only (no HVP, no sparse Hessian)",
}
_SPARSE_TIPS = (
    "forward, reverse and Hessian as usual, one pass per input (output)",
    "forward, reverse and Hessian from their sparsity pattern, read from the program and "
    "colored: one pass per color (JAX)",
    "each of forward, reverse and Hessian both ways: dense beside sparse",
)
_CHECKPOINT_TEXT = {"false": "none", "true": "each step", "sqrt": "\u221asteps"}
_CHECKPOINT_TIPS = {
    "false": "reverse as usual: the tape keeps what every step of the loop computed",
    "true": "checkpoint=True: the loop's steps run again in the backward pass instead of "
    "being kept: less memory, more time",
    "sqrt": "checkpoint='sqrt': the loop in about \u221asteps segments, each run again in the "
    "backward pass (Griewank): about \u221asteps carries kept",
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


def composition_boxes(state: LabTraits) -> dict[str, w.Checkbox]:
    """A checkbox per composition of Hessian and HVP, ticked as ``state.compositions``."""
    return {c: w.Checkbox(value=c in state.compositions, description=c, indent=False,
                          tooltip=_COMPOSITION_TIPS[c], layout=w.Layout(width="auto"))
            for c in COMPOSITION_CHOICES}  # fmt: skip


def sparse_buttons(state: LabTraits) -> w.ToggleButtons:
    """The sparse choice (dense, sparse, both), linked to ``state.sparse``."""
    buttons = w.ToggleButtons(options=list(SPARSE_CHOICES), value=state.sparse,
                              tooltips=list(_SPARSE_TIPS),
                              style={"button_width": "72px"})  # fmt: skip
    traitlets.link((buttons, "value"), (state, "sparse"))
    return buttons


def show_refusal(box: w.Checkbox | w.ToggleButtons, text: str | None, tip: str | list,
                 refusal: Refusal | None) -> None:  # fmt: skip
    """Grey ``box`` out with ``refusal``'s hint in its label and its reason as its tooltip,
    or give it back its own ``text`` and ``tip`` (None: a box without a label)."""
    box.disabled = refusal is not None
    if text is not None:
        box.description = text if refusal is None else f"{text} ({refusal.hint})"
    if isinstance(box, w.ToggleButtons):
        box.tooltips = tip if refusal is None else [refusal.why] * len(box.options)
    else:
        box.tooltip = tip if refusal is None else refusal.why


def watch_refusals(state: LabTraits, modes: dict[str, w.Checkbox],
                   compositions: dict[str, w.Checkbox],
                   sparse: w.ToggleButtons) -> None:  # fmt: skip
    """Keep the greying-out of ``modes``, ``compositions`` and ``sparse`` up to the ticks."""

    def update(_change: dict | None = None) -> None:
        for m, box in modes.items():
            show_refusal(box, _MODE_TEXT[m], _MODE_TIPS[m], mode_refusal(m, state.frameworks))
        for c, box in compositions.items():
            show_refusal(box, c, _COMPOSITION_TIPS[c], composition_refusal(c, state.modes))
        show_refusal(sparse, None, list(_SPARSE_TIPS), sparse_refusal(state.frameworks))

    state.observe(update, ["frameworks", "modes"])
    update()


def checkpoint_row(state: LabTraits) -> tuple[w.VBox, dict[str, w.Checkbox]]:
    """The checkpoint choices, a checkbox each, ticked as ``state.checkpoints``, and the
    row that shows them: where they do nothing (a model without loops; reverse not
    ticked) greyed out, a line under them saying what to do and each tooltip why."""
    boxes = {c: w.Checkbox(value=c in state.checkpoints, description=_CHECKPOINT_TEXT[c],
                           indent=False, tooltip=_CHECKPOINT_TIPS[c],
                           layout=w.Layout(width="auto"))
             for c in CHECKPOINT_CHOICES}  # fmt: skip
    hint = w.HTML()
    hint.add_class("adlab-hint")

    def update(_change: dict | None = None) -> None:
        why = checkpoint_refusal(state.model, state.modes)
        hint.value = f"checkpointing: {why.hint}" if why else ""
        for c, box in boxes.items():
            show_refusal(box, None, _CHECKPOINT_TIPS[c], why)

    state.observe(update, ["model", "modes"])
    update()
    title = w.HTML("<b>Checkpoint</b>&nbsp;", tooltip="reverse mode's tape of the loops")
    return w.VBox([w.HBox([title, *boxes.values()]), hint]), boxes


def framework_box(name: str, ticked: bool) -> w.Checkbox:
    """The checkbox of one framework: greyed out, with its pip command, if not installed."""
    label = KNOWN[name].label
    if installed(name):
        return w.Checkbox(value=ticked, description=label, indent=False,
                          tooltip=KNOWN[name].description,
                          layout=w.Layout(width="auto"))  # fmt: skip
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
