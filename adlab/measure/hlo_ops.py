"""XLA's cost analysis of a compiled program, one top-level operation at a time.

``Prepared.cost()`` gives XLA's totals for a whole program; a profile needs
them per operation (per fusion, dot, copy ... of the entry computation, the
units the CPU runtime executes and the profiler names). JAX exposes no
per-instruction cost, so each top-level instruction is cut out of the
compiled HLO text into a module of its own (its operands become parameters,
the computations it calls come with it) and XLA's own ``HloCostAnalysis``
runs on that module. The flops of all operations add up to the program's
total, by construction of the analysis; bytes are what XLA counts as read
and written by the operation (its operands and result, fused intermediates
excluded).

XLA counts the body of a loop once, whatever its trip count, here as in the
totals. Transcendentals (tanh, exp, ...) are counted apart from flops, as
XLA does.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

#: instructions that run no code of their own (no thunk, nothing to profile)
_FREE = {"parameter", "constant", "bitcast", "tuple", "get-tuple-element", "after-all"}
#: opcodes named in a fusion's label beside its root: they dominate its work
_HEAVY = ("dot", "convolution", "reduce", "reduce-window", "scatter", "gather", "sort")
_INSTR = re.compile(r"^(?:ROOT )?(\S+) = (.+?) ([a-z][a-z0-9-]*)\((.*)$")
_CALLED = re.compile(
    r"(?:calls|to_apply|body|condition|branch_computations|called_computations)="
    r"\{?([\w.\-, ]+)\}?"
)


@dataclass(frozen=True)
class HloOp:
    """One top-level instruction of a compiled program and XLA's cost of it.

    Attributes:
        name: the instruction's name, as the profiler reports it (``fusion.3``).
        label: the name and what it computes, e.g. ``fusion.3 (dot, add)``.
        flops, transcendentals, bytes: XLA's counts for one execution.
    """

    name: str
    label: str
    flops: float
    transcendentals: float
    bytes: float


def hlo_ops(compiled: Any) -> dict[str, HloOp]:
    """XLA's cost of each top-level instruction of a ``jax.stages.Compiled``, by name.

    An instruction whose module XLA cannot rebuild gets NaN costs (its
    time is still profiled).
    """
    from jax._src.lib import xla_client as xc  # private: no public per-op cost in JAX

    module = compiled.runtime_executable().hlo_modules()[0]
    options = xc.hlo.HloPrintOptions.short_parsable()
    options.print_metadata = False
    options.print_backend_config = False
    options.print_control_dependencies = False
    options.print_large_constants = True
    options.print_operand_shape = True
    comps, entry = _computations(module.to_string(options))
    client = _cpu_client()
    out = {}
    for line in comps[entry]:
        m = _INSTR.match(line)
        if m is None or m.group(3) in _FREE:
            continue
        name, opcode = m.group(1), m.group(3)
        called = _called(line, comps)
        label = f"{name} ({_what(opcode, called, comps)})"
        try:
            cost = xc._xla.hlo_module_cost_analysis(
                client, xc.hlo.hlo_module_from_text(_module_of(m, called, comps))
            )
        except Exception:  # an instruction the text parser refuses: time it, cost unknown
            out[name] = HloOp(name, label, math.nan, math.nan, math.nan)
            continue
        out[name] = HloOp(
            name, label, float(cost.get("flops", 0.0)),
            float(cost.get("transcendentals", 0.0)), float(cost.get("bytes accessed", 0.0)),
        )  # fmt: skip
    return out


def _cpu_client() -> Any:
    import jax

    return jax.devices("cpu")[0].client


def _computations(text: str) -> tuple[dict[str, list[str]], str]:
    """The module's computations (name -> instruction lines) and the entry's name."""
    comps: dict[str, list[str]] = {}
    entry, name, lines = "", None, []
    for raw in text.splitlines():
        if raw.endswith("{") and not raw.startswith((" ", "HloModule")):
            head = raw[:-1].split()
            name, lines = head[-1], []
            if head[0] == "ENTRY":
                entry = name
        elif raw == "}" and name is not None:
            comps[name], name = lines, None
        elif name is not None:
            lines.append(raw.strip())
    return comps, entry


def _called(line: str, comps: dict[str, list[str]]) -> list[str]:
    """Computations ``line`` calls, directly or not, callees first."""
    order: list[str] = []
    todo = [line]
    while todo:
        for group in _CALLED.findall(todo.pop()):
            for callee in (c.strip() for c in group.split(",")):
                if callee in comps and callee not in order:
                    order.append(callee)
                    todo.extend(comps[callee])
    return order[::-1]


def _what(opcode: str, called: list[str], comps: dict[str, list[str]]) -> str:
    """What an instruction computes: its opcode, or for a fusion its heavy ops and root."""
    if opcode != "fusion" or not called:
        return opcode
    body = comps[called[-1]]  # the fused computation itself (callees come first)
    parsed = [(line.startswith("ROOT "), m.group(3))
              for line in body for m in [_INSTR.match(line)] if m is not None]  # fmt: skip
    ops = [op for _, op in parsed]
    root = next((op for is_root, op in parsed if is_root), ops[-1] if ops else opcode)
    heavy = [op for op in _HEAVY if op in ops and op != root]
    return ", ".join([*heavy, root])


def _module_of(m: re.Match, called: list[str], comps: dict[str, list[str]]) -> str:
    """HLO text of a module that runs the one instruction ``m`` on parameters."""
    name, shape, opcode, rest = m.groups()
    operands, attributes = _split_operands(rest)
    params, args = [], []
    for i, operand in enumerate(operands):
        operand_shape = operand.rsplit(" ", 1)[0]
        params.append(f"  p{i} = {operand_shape} parameter({i})")
        args.append(f"{operand_shape} p{i}")
    body = "\n".join([*params, f"  ROOT {name} = {shape} {opcode}({', '.join(args)}){attributes}"])
    callees = "".join(f"{c} {{\n" + "\n".join(f"  {ln}" for ln in comps[c]) + "\n}\n\n"
                      for c in called)  # fmt: skip
    return f"HloModule op\n\n{callees}ENTRY main {{\n{body}\n}}\n"


def _split_operands(rest: str) -> tuple[list[str], str]:
    """Operands (up to the closing parenthesis) and the attributes after it."""
    depth, parts, current = 0, [], ""
    for i, ch in enumerate(rest):
        if ch in ")]}" and depth == 0:
            if current.strip():
                parts.append(current.strip())
            return parts, rest[i + 1 :]
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    raise ValueError(f"unbalanced HLO instruction: {rest[:80]}")
