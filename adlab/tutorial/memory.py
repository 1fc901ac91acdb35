"""What notebook 08 reads: the memory a derivative holds, and what checkpointing trades for it.

``CHAIN`` is the notebook's model: k elementwise steps ``x = tanh(a x)`` over n
numbers. ``tape_rows`` measures each framework's memory on it
(``Prepared.memory``: the peak above the inputs, the residuals a reverse pass
keeps, and the counter that gave both); ``tape_table`` lays them out and
``tape_facts`` says what holds on every machine (arrays kept a step, whether the
peak grows as k). ``checkpoint_table`` and ``checkpoint_facts`` read a sweep of
reverse mode with and without ``checkpoint=``, against plain reverse mode of the
same framework; ``limit_between`` picks a memory limit that one series meets and
another does not, for ``adlab.advise``. Nothing here times anything.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .._format import human_bytes, ratio, seconds
from .._vocab import Record
from ..engine.backends import label_of
from ..engine.derivative import prepare
from ..engine.model.source import Model
from ..measure import parse_variant
from ..report.table import Table
from .frameworks import available

#: k steps of an elementwise map over n float64 numbers: each step's derivative reads one
#: array of n (tanh's output, or its input), so a tape keeps about k * n * 8 bytes
CHAIN = '''"""k elementwise steps over n numbers: x = tanh(a x), k times; f = sum(x).

a is one number and x holds n. wrt=0: df/da, one number, so forward and reverse
mode each take one pass. wrt=1: df/dx, n numbers, reverse mode's one pass.
"""

K = 10  # the steps
LOOP = False  # True: the steps as a fori_loop (on JAX, one compiled loop body)


def setup(n, rng):
    return np.full(1, 1.01), rng.normal(size=n)


def f(a, x):
    def step(i, x):
        return np.tanh(a * x)

    if LOOP:
        x = fori_loop(0, K, step, x)
    else:
        for i in range(K):
            x = step(i, x)
    return np.sum(x)
'''
#: a figure "grows as k" where, from the fewest steps to the most, it grows more than halfway
#: to k's own growth (so sqrt(k) growth, checkpointing's, does not count)
_GROWS = 0.5


@dataclass(frozen=True)
class MemoryRow:
    """One derivative's memory on the chain of ``k`` steps over ``n`` numbers."""

    backend: str
    mode: str
    wrt: int
    k: int
    n: int
    program: str  # "unrolled", "fori_loop", "fori_loop, checkpoint=sqrt" ...
    peak_bytes: float | None
    residual_bytes: float | None
    memory_counter: str | None


def chain(k: int, loop: bool = False) -> Model:
    """The chain of ``k`` steps, unrolled or (``loop``) as a ``fori_loop``."""
    return Model.from_source(CHAIN, name="chain", K=k, LOOP=loop)


def _program(loop: bool, checkpoint: bool | str | None) -> str:
    if not loop:
        return "unrolled"
    return "fori_loop" + ("" if checkpoint in (None, False) else f", checkpoint={checkpoint}")


def installed_backends(backends: Sequence[str]) -> list[str]:
    """``backends`` that are installed here, in order; the others are named, with their
    pip command (``available``)."""
    kept = available([f"reverse({b})" for b in backends])
    return [parse_variant(v).backend for v in kept]


def tape_rows(
    backends: Sequence[str],
    modes: Sequence[str],
    ks: Sequence[int],
    n: int,
    wrt: int = 0,
    loop: bool = False,
    checkpoints: Sequence[bool | str | None] = (None,),
) -> list[MemoryRow]:
    """Each installed framework's memory for each mode, k and checkpointing (prepare's
    ``checkpoint=``, which only a loop heeds), measured once per program."""
    rows = []
    for backend in installed_backends(backends):
        for checkpoint in checkpoints:
            for k in ks:
                model = chain(k, loop)
                args = model.setup(n)
                for mode in modes:
                    p = prepare(
                        model, *args, mode=mode, backend=backend, wrt=wrt, checkpoint=checkpoint
                    )
                    rows.append(
                        MemoryRow(
                            backend, mode, wrt, k, n, _program(loop, checkpoint), **p.memory()
                        )
                    )
    return rows


def _per_step(row: MemoryRow) -> float | None:
    """Residuals in arrays of n float64 a step: 1.0 is one array kept per step."""
    if row.residual_bytes is None:
        return None
    return row.residual_bytes / (row.k * row.n * 8)


def _looped(rows: Sequence[MemoryRow]) -> bool:
    """Whether any row's steps are a loop: then the tables say how each was written."""
    return any(r.program != "unrolled" for r in rows)


def tape_table(rows: Sequence[MemoryRow]) -> Table:
    """Per framework, mode, program and k: the peak and residuals, and both in arrays of n."""
    looped = _looped(rows)
    body = []
    for r in rows:
        step = _per_step(r)
        body.append(
            (
                label_of(r.backend),
                r.mode,
                *([r.program] if looped else []),
                r.k,
                human_bytes(r.peak_bytes),
                human_bytes(r.residual_bytes),
                "-" if step is None else f"{step:.2f}",
                f"{r.peak_bytes / (r.n * 8):.2f}" if r.peak_bytes else "-",
            )
        )
    counters = dict.fromkeys(f"{label_of(r.backend)} {r.mode}: {r.memory_counter}" for r in rows)
    n = rows[0].n if rows else 0
    return Table.of(
        (
            "framework",
            "mode",
            *(["program"] if looped else []),
            "k",
            "peak",
            "residuals",
            "residuals / (k n 8)",
            "peak / (n 8)",
        ),
        body,
        title=f"memory per call, n = {n:,} float64 (1 KB = 1000 bytes)",
        notes=["counted by:", *(f"  {c}" for c in counters)],
    )


def _arrays_a_step(rows: Sequence[MemoryRow]) -> str:
    """The arrays of n kept a step, to the nearest whole array ("1", "2"); "< 1" where
    fewer than one a step is kept (checkpointing); "none" without residuals."""
    steps = [s for s in map(_per_step, rows) if s is not None]
    if not steps:
        return "none"
    if min(steps) < 0.5:
        return "< 1"
    return ", ".join(map(str, sorted({round(s) for s in steps})))


def _grows(first: float | None, last: float | None, k_ratio: float) -> str:
    if not first or last is None:
        return "-"
    return "yes" if last / first > 1 + _GROWS * (k_ratio - 1) else "no"


def tape_facts(rows: Sequence[MemoryRow]) -> Table:
    """Per framework, mode and program, what holds on every machine: the arrays of n its
    residuals keep a step (none in forward mode), and whether its peak and residuals grow
    as k (``_GROWS``)."""
    looped = _looped(rows)
    body = []
    for key in dict.fromkeys((r.backend, r.mode, r.program) for r in rows):
        same = sorted((r for r in rows if (r.backend, r.mode, r.program) == key), key=lambda r: r.k)
        first, last = same[0], same[-1]
        k_ratio = last.k / first.k
        body.append(
            (
                label_of(key[0]),
                key[1],
                *([key[2]] if looped else []),
                _arrays_a_step(same),
                _grows(first.residual_bytes, last.residual_bytes, k_ratio),
                _grows(first.peak_bytes, last.peak_bytes, k_ratio),
            )
        )
    ks = sorted({r.k for r in rows})
    return Table.of(
        (
            "framework",
            "mode",
            *(["program"] if looped else []),
            "arrays kept a step",
            "residuals grow as k",
            "peak grows as k",
        ),
        body,
        title=f"k = {', '.join(map(str, ks))}: what holds on every machine",
    )


# ------------------------------------------------------------------ checkpointing
def _checkpoint(r: Record) -> str:
    said = parse_variant(r.label).checkpoint
    return {None: "none", False: "none", True: "each step"}.get(said, str(said))


def _plain(records: Sequence[Record], r: Record) -> Record | None:
    """Reverse mode of ``r``'s framework and size without checkpointing."""
    for p in records:
        if (p.backend, p.n, p.mode) == (r.backend, r.n, r.mode) and _checkpoint(p) == "none":
            return p
    return None


def _over(x: float | None, y: float | None) -> float | None:
    return x / y if x is not None and y else None


def _measured(records: Iterable[Record]) -> list[Record]:
    return [r for r in records if r.mode == "reverse" and not r.skipped]


def checkpoint_table(records: Iterable[Record]) -> Table:
    """Per framework, n and checkpointing: time, peak and residuals, each also as a
    multiple of plain reverse mode's (same framework, same n)."""
    records = _measured(records)
    body = []
    for r in sorted(records, key=lambda r: (r.backend, r.n)):
        p = _plain(records, r)
        body.append(
            (
                label_of(r.backend),
                r.n,
                _checkpoint(r),
                seconds(r.median_s),
                ratio(_over(r.median_s, p and p.median_s)),
                human_bytes(r.peak_bytes),
                ratio(_over(r.peak_bytes, p and p.peak_bytes)),
                human_bytes(r.residual_bytes),
                ratio(_over(r.residual_bytes, p and p.residual_bytes)),
            )
        )
    return Table.of(
        (
            "framework",
            "n",
            "checkpoint",
            "time",
            "time / plain",
            "peak",
            "peak / plain",
            "residuals",
            "residuals / plain",
        ),
        body,
        title="reverse mode, checkpointed against plain (the same framework and n "
        "without checkpointing)",
    )


def checkpoint_facts(records: Iterable[Record]) -> Table:
    """Per framework and checkpointing, over every n measured: whether its residuals
    were below plain reverse mode's at each n, and whether it gave the same derivative."""
    records = _measured(records)
    body = []
    for key in dict.fromkeys((r.backend, _checkpoint(r)) for r in records):
        if key[1] == "none":
            continue
        same = [r for r in records if (r.backend, _checkpoint(r)) == key]
        less = all(_fewer(r, _plain(records, r)) for r in same)
        fewest = all(_fewest(records, r) for r in same)
        agree = all(r.error is not None and r.error < 1e-12 for r in same)
        body.append((label_of(key[0]), key[1], _yes(less), _yes(fewest), _yes(agree)))
    ns = sorted({r.n for r in records})
    return Table.of(
        (
            "framework",
            "checkpoint",
            "residuals below plain's",
            "the fewest residuals",
            "same derivative (error < 1e-12)",
        ),
        body,
        title=f"n = {', '.join(map(str, ns))}: what holds on every machine",
    )


def _yes(fact: bool) -> str:
    return "yes" if fact else "no"


def _fewest(records: Sequence[Record], r: Record) -> bool:
    """Whether ``r`` keeps the fewest residuals of its framework at its n."""
    others = [p.residual_bytes for p in records if (p.backend, p.n) == (r.backend, r.n)]
    return r.residual_bytes is not None and all(o is None or r.residual_bytes <= o for o in others)


def _fewer(r: Record, plain: Record | None) -> bool:
    return (
        plain is not None
        and r.residual_bytes is not None
        and plain.residual_bytes is not None
        and r.residual_bytes < plain.residual_bytes
    )


def limit_between(records: Iterable[Record], n: int, fits: str, past: str) -> float:
    """A memory limit (bytes, rounded to two figures) between the peaks of series ``fits``
    and ``past`` at ``n``: the first meets it, the second does not."""
    peaks = {r.label: r.peak_bytes for r in records if r.n == n and r.peak_bytes}
    low, high = peaks[fits], peaks[past]
    if not low < high:
        raise ValueError(
            f"{fits}'s peak ({human_bytes(low)}) is not below {past}'s "
            f"({human_bytes(high)}) at n = {n}"
        )
    middle = math.sqrt(low * high)
    scale = 10 ** (math.floor(math.log10(middle)) - 1)
    rounded = round(middle / scale) * scale
    return rounded if low < rounded < high else middle
