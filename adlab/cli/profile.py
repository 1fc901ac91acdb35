"""``adlab profile``: where the time goes, the primal beside a derivative, operation by operation.

Registered in ``adlab.cli`` by ``add_parser(subparsers)``.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence

from .._format import seconds
from .._vocab import SCHEMES
from ..engine.backends import KNOWN
from ..measure.profile import CALLS, OpCost, Profile, profile
from ._args import add_backend_argument, add_model_arguments

#: width of an operation's name in the table (longer names are cut)
NAME = 36


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``profile`` on the ``adlab`` command's subparsers."""
    p = sub.add_parser(
        "profile",
        help="where the time goes: the primal and a derivative, operation by operation",
        description="Run the primal and the derivative under JAX's profiler (CPU) and list "
        "the operations XLA executes (fusions, dots, copies), longest first: time per "
        "call, share of the call, XLA's flops and the flop rate; then name the "
        "derivative's operations whose rate falls far below the primal's. With --backend "
        "torch: torch.profiler's operations, eagerly, with FlopCounterMode's flops.",
    )
    add_model_arguments(p, model="mlp_batched", n=100, seed=True)
    p.add_argument("--mode", default="reverse", help="forward, reverse, numeric or complex-step")
    p.add_argument("--scheme", default="central", choices=sorted(SCHEMES),
                   help="finite-difference scheme for numeric")  # fmt: skip
    # every backend is a choice, so that the others get profile's reason, not argparse's
    add_backend_argument(p, "jax (XLA's operations, jitted) or torch (PyTorch's, eager); "
                         "the others say why not")  # fmt: skip
    p.add_argument("--calls", type=int, default=CALLS, help=f"profiled calls (default {CALLS})")
    p.add_argument("--factor", type=float, default=2.0,
                   help="slow: below the primal's flop rate / factor (2)")  # fmt: skip
    p.add_argument("--top", type=int, default=15, help="operations shown per side (15)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..catalog import resolve_model

    model = resolve_model(args.model, **dict(args.settings))
    prof = profile(model, args.n, args.mode, args.backend, scheme=args.scheme,
                   precision=args.precision, seed=args.seed, calls=args.calls)  # fmt: skip
    print(format_profile(prof, top=args.top, factor=args.factor))
    return 0


def format_profile(prof: Profile, top: int = 15, factor: float = 2.0) -> str:
    """The primal's operations beside the derivative's, then the slow ones, as text."""
    label = prof.mode + (f"[{prof.scheme}]" if prof.scheme else "")
    words = _WORDS[KNOWN[prof.backend].profiler]
    lines = [
        f"{prof.model}, n={prof.n}, {label}, {prof.precision}, {words['where']}: "
        f"{prof.calls} profiled calls, {words['times']}",
        "",
        _row(("primal", "", "", "", ""), (label, "", "", "", "")),
        _row(_HEAD, _HEAD),
    ]
    left = _cells(prof.primal, prof.primal_ops_s)
    right = _cells(prof.derivative, prof.derivative_ops_s)
    for i in range(min(top, max(len(left), len(right)))):
        lines.append(_row(left[i] if i < len(left) else None,
                          right[i] if i < len(right) else None))  # fmt: skip
    hidden = max(len(left), len(right)) - top
    if hidden > 0:
        lines.append(f"  ... {hidden} more (--top)")
    lines.append(_row(*(_total("operations", ops, s) for ops, s in (
        (prof.primal, prof.primal_ops_s), (prof.derivative, prof.derivative_ops_s)))))  # fmt: skip
    lines.append(_row(("measured call", seconds(prof.primal_s), "", "", ""),
                      ("measured call", seconds(prof.derivative_s), "", "", "")))  # fmt: skip
    lines += [
        "",
        f"operations' sum / measured call: primal {_pct(prof.primal_ops_s, prof.primal_s)}, "
        f"{label} {_pct(prof.derivative_ops_s, prof.derivative_s)} (below 100%: "
        "dispatch, threads waking up; timed apart, so load moves the two apart)",
        f"{label} / primal: {_x(prof.derivative_s, prof.primal_s)} in time (measured), "
        f"{_x(_flops(prof.derivative), _flops(prof.primal))} in {words['counter']}; flop rate "
        f"{_gflops(prof.derivative_rate)} against the primal's {_gflops(prof.primal_rate)} "
        "GFLOP/s",
    ]
    lines += _slow_lines(prof, factor)
    lines += [
        "",
        "time: wall time per call in the operation (overlapping operations share it); "
        "share: of the operations' sum;",
        f"{words['flops']}; measured: adlab.time_call, outside the profiler.",
    ]
    return "\n".join(lines)


#: what the text says of a profile, by how it was read (a framework's ``profiler``)
_WORDS = {
    "xla": {"where": "JAX on the CPU", "times": "operations' times averaged over the typical ones",
            "counter": "XLA flops",
            "flops": "flops: XLA's count (tanh, exp ... are transcendentals, not counted)"},
    "torch.profiler": {"where": "PyTorch eager on the CPU",
                       "times": "operations' self CPU times averaged over them",
                       "counter": "FlopCounterMode's flops",
                       "flops": "flops: FlopCounterMode's count, matrix products only ('-': "
                                "an operation not counted, such as tanh)"},
}  # fmt: skip


_HEAD = ("operation", "time", "share", "flops", "GFLOP/s")


def _cells(ops: Sequence[OpCost], total: float) -> list[tuple[str, ...]]:
    return [(op.name, seconds(op.time_s), _pct(op.time_s, total),
             _count(op.flops), _gflops(op.flop_rate)) for op in ops]  # fmt: skip


def _total(what: str, ops: Sequence[OpCost], total: float) -> tuple[str, ...]:
    return (f"sum of {len(ops)} {what}", seconds(total), "100%", _count(_flops(ops)),
            _gflops(_flops(ops) / total if total else math.nan))  # fmt: skip


def _pct(a: float, b: float) -> str:
    return f"{a / b:.0%}" if b else "-"


def _row(left: tuple[str, ...] | None, right: tuple[str, ...] | None) -> str:
    def side(cells: tuple[str, ...] | None) -> str:
        if cells is None:
            return " " * (NAME + 34)
        name, t, share, flops, rate = cells
        return f"{name[:NAME]:<{NAME}} {t:>9} {share:>5} {flops:>9} {rate:>8}"

    return f"{side(left)} | {side(right)}".rstrip()


def _slow_lines(prof: Profile, factor: float) -> list[str]:
    slow = prof.slow_ops(factor)
    head = (f"{prof.mode}'s operations below the primal's rate / {factor:g} "
            f"({_gflops(prof.primal_rate / factor)} GFLOP/s), 1% of its time or more:")  # fmt: skip
    if not slow:
        return ["", head, "  none"]
    total = prof.derivative_ops_s
    return ["", head] + [
        f"  {op.name}: {seconds(op.time_s)} ({op.time_s / total:.0%}), "
        + (f"{_gflops(op.flop_rate)} GFLOP/s" if op.flops else "no flops: it only moves memory")
        for op in slow
    ]


def _flops(ops: Sequence[OpCost]) -> float:
    return sum(op.flops for op in ops if math.isfinite(op.flops))


def _count(x: float) -> str:
    return "-" if not math.isfinite(x) else f"{x:.3g}"


def _gflops(rate: float) -> str:
    return "-" if not math.isfinite(rate) else f"{rate / 1e9:.3g}"


def _x(a: float, b: float) -> str:
    return f"{a / b:.2g}x" if b and math.isfinite(a / b) else "-"
