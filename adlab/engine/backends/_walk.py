"""One walk over JAX's program for the backends that run it elsewhere (js, tfjs).

Those backends run the program JAX traces from the model (a jaxpr), translated equation
by equation. What they share lives here, once. A target (a ``Walker`` subclass) says how
it holds a constant and which rule writes each primitive (its table, ``rules``); the
walk does the rest:

- it binds a jaxpr's constants and inputs and translates its equations in order;
- it inlines calls (``pjit``, ``closed_call``, ``custom_jvp_call``, ``custom_vjp_call``,
  ``remat``): their bodies are walked in place;
- it walks the bodies of loops and branches (``scan``, ``while``, ``cond``) for the
  target's rules of those, which write the loop around them (``inside``; ``Scan``,
  ``While``, ``Cond`` split the operands);
- it knows which of the inputs its caller marked each value depends on (``sources``):
  js tells JAX's backward equations (those that read the cotangent) from the forward
  ones by it, where the program's own text would have to be guessed at;
- it names the model's line of an equation (inside a call or a loop: the body's line,
  else the enclosing one's), and refuses a primitive the target has no rule for with a
  ``ModelError`` there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..._vocab import ModelError
from ..model.userline import eqn_line, source_line
from ..programs.jaxpr import call_body

#: call-like primitives whose body is inlined (``jaxpr.call_body`` finds it)
CALLS = frozenset({"pjit", "jit", "closed_call", "core_call", "custom_jvp_call",
                   "custom_vjp_call", "custom_vjp_call_jaxpr", "remat", "remat2",
                   "checkpoint", "custom_lin"})  # fmt: skip

Rule = Callable[..., Any]


def is_literal(var: Any) -> bool:
    """Whether a jaxpr operand is a literal (a constant written in the equation)."""
    return hasattr(var, "val")


class Walker:
    """A jaxpr translated for one target, equation by equation.

    A subclass sets the table ``rules`` (primitive name -> ``rule(walker, eqn, ins) ->
    outs``), the words of its refusal (``label``, ``backend``, ``covers``,
    ``elsewhere``), and ``const``; the other hooks (``literal``, ``start``, ``enter``,
    ``apply``, ``finish``) default to doing nothing of their own.
    """

    rules: Mapping[str, Rule] = {}
    #: how the target is named in a refusal: "JavaScript" translation, backend='js'
    label = ""
    backend = ""
    #: what it translates, in words; where else the model runs
    covers = ""
    elsewhere = "backend='jax'"
    #: what the refusal stops, and what else to do (an export has no other backend to try)
    stops = "backend={backend!r} cannot run this model"
    instead = "or run it on another backend, e.g. {elsewhere}"

    def __init__(self, files: frozenset[str]) -> None:
        self.files = files
        #: the marks (``walk``'s) of the inputs the equation being translated depends on
        self.sources: frozenset[str] = frozenset()
        self._marks: dict[Any, frozenset[str]] = {}
        self._where: list[Any] = []  # the enclosing calls and loops (outermost first)

    # ------------------------------------------------------------ a target's hooks
    def const(self, value: Any) -> Any:
        """The target's value of a constant array."""
        raise NotImplementedError

    def literal(self, value: Any) -> Any:
        """The target's value of a literal operand (a constant written in place)."""
        return self.const(value)

    def start(self, jaxpr: Any) -> None:
        """Called before ``jaxpr``'s equations are translated (js counts their uses)."""

    def enter(self, eqn: Any, ins: list) -> list:
        """A call's operands, as its inlined body takes them."""
        return ins

    def apply(self, rule: Rule, eqn: Any, ins: list) -> list:
        """The outputs of ``rule`` on ``eqn`` (a target may prepare its operands, or
        record what the rule did)."""
        return rule(self, eqn, ins)

    def finish(self, outs: list) -> list:
        """A jaxpr's outputs, as the target hands them on."""
        return outs

    # ---------------------------------------------------------------- the walk
    def walk(self, closed: Any, inputs: Sequence, marks: Sequence = ()) -> list:
        """The outputs of a closed jaxpr whose inputs are ``inputs``. ``marks``: per input,
        the names of what it is (say "primal", "cotangent"), which ``sources`` reads back
        for each equation that depends on it; none: unmarked."""
        marks = list(marks) or [frozenset()] * len(inputs)
        return self.run(closed.jaxpr, list(closed.consts), list(inputs), marks)

    def run(self, jaxpr: Any, consts: list, inputs: list, marks: Sequence | None = None) -> list:
        """Translate ``jaxpr``'s equations, its inputs bound to ``inputs`` (marked as the
        equation that encloses it, where ``marks`` is None); its outputs."""
        if marks is None:
            marks = [self.sources] * len(inputs)
        self.start(jaxpr)
        env: dict[Any, Any] = {}
        for v, c in zip(jaxpr.constvars, consts, strict=True):
            env[v] = self.const(c)
        for v, val, mark in zip(jaxpr.invars, inputs, marks, strict=True):
            env[v] = val
            self._marks[v] = frozenset(mark)
        for eqn in jaxpr.eqns:
            ins = [self.read(env, v) for v in eqn.invars]
            sources = frozenset().union(*(self._marks.get(v, frozenset())
                                          for v in eqn.invars if not is_literal(v)))  # fmt: skip
            outer, self.sources = self.sources, sources
            try:
                outs = self.equation(eqn, ins)
            finally:
                self.sources = outer
            for v, val in zip(eqn.outvars, outs, strict=True):
                env[v] = val
                self._marks[v] = sources
        return self.finish([self.read(env, v) for v in jaxpr.outvars])

    def read(self, env: dict, v: Any) -> Any:
        return self.literal(v.val) if is_literal(v) else env[v]

    def equation(self, eqn: Any, ins: list) -> list:
        """The outputs of one equation: a call's body inlined, else the target's rule."""
        name = eqn.primitive.name
        if name in CALLS:
            body = call_body(eqn)
            if body is not None:
                return self.inside(eqn, body[0], body[1], self.enter(eqn, ins))
        rule = self.rules.get(name)
        if rule is None:
            raise self.uncovered(eqn)
        return self.apply(rule, eqn, ins)

    def inside(self, eqn: Any, jaxpr: Any, consts: list, inputs: list,
               marks: Sequence | None = None) -> list:  # fmt: skip
        """The outputs of the body ``jaxpr`` of ``eqn`` (a call, a loop, a branch), walked
        where the target writes it next: an equation in it is named at its own line, or
        else at ``eqn``'s."""
        self._where.append(eqn)
        try:
            return self.run(jaxpr, consts, inputs, marks)
        finally:
            self._where.pop()

    # -------------------------------------------------------- the model's lines
    def where(self, eqn: Any) -> tuple[str, int] | None:
        """(file, line) of the model's line that made ``eqn`` (inside a library call: the
        call's line), or None."""
        for e in (eqn, *reversed(self._where)):
            found = eqn_line(e, self.files)
            if found:
                return found
        return None

    def uncovered(self, eqn: Any, why: str = "") -> ModelError:
        """The error for an operation the target cannot run, at the model's line."""
        name = eqn.primitive.name
        where = self.where(eqn)
        lineno = where[1] if where else None
        detail = f" ({why})" if why else ""
        return ModelError(
            f"the operation {name!r} (JAX's primitive){detail} has no {self.label} "
            f"translation in adlab yet, so {self.stops.format(backend=self.backend)}",
            lineno=lineno, line=source_line(*where) if where else None,
            hint=(f"write {'line ' + str(lineno) if lineno else 'f'} with operations "
                  f"{self.backend} translates ({self.covers}), "
                  f"{self.instead.format(elsewhere=self.elsewhere)}"),
        )  # fmt: skip


# ------------------------------------------------------------------ the loops
@dataclass(frozen=True)
class Scan:
    """A ``scan`` equation's parts: ``length`` steps (from the last, ``reverse``) of
    ``body`` (its constants ``body_consts``) on the operands ``consts``, ``carries`` and
    ``xs`` (stacked along their first axis); its outputs are the carries, then ``ys``
    (stacked likewise)."""

    length: int
    reverse: bool
    body: Any
    body_consts: list
    consts: list
    carries: list
    xs: list


def scan_of(eqn: Any, ins: list) -> Scan:
    p = eqn.params
    nc, nk = p["num_consts"], p["num_carry"]
    return Scan(int(p["length"]), bool(p["reverse"]), p["jaxpr"].jaxpr, list(p["jaxpr"].consts),
                ins[:nc], ins[nc : nc + nk], ins[nc + nk :])  # fmt: skip


@dataclass(frozen=True)
class While:
    """A ``while`` equation's parts: ``cond`` (closed; on ``cond_consts`` and the carries)
    says whether ``body`` (closed; on ``body_consts`` and the carries) runs once more."""

    cond: Any
    body: Any
    cond_consts: list
    body_consts: list
    carries: list


def while_of(eqn: Any, ins: list) -> While:
    p = eqn.params
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    return While(p["cond_jaxpr"], p["body_jaxpr"], ins[:nc], ins[nc : nc + nb], ins[nc + nb :])


@dataclass(frozen=True)
class Cond:
    """A ``cond`` equation's parts: ``branches[index]`` (closed) runs on ``operands``
    (``index`` is in range: ``lax.switch`` clamps it before)."""

    index: Any
    branches: tuple
    operands: list


def cond_of(eqn: Any, ins: list) -> Cond:
    return Cond(ins[0], tuple(eqn.params["branches"]), ins[1:])
