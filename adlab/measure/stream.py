"""``Sweep``: the records of one sweep, as an iterator that keeps what it has yielded.

``bench`` returns one; a UI iterates it to plot each size as it comes, and what was
yielded before an interruption stays in ``records``. Shown in a notebook, it runs to
its end and shows its table.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator

from .._vocab import Record

#: records -> the HTML table of them: set by ``adlab.report``, the layer that draws tables
#: (measure does not import it)
table_html: Callable[[list[Record]], str] | None = None


class Sweep(Iterator[Record]):
    """The records of one sweep, measured as they are iterated.

    Attributes:
        total: the number of records the sweep will yield.
        records: the records yielded so far (intact if the sweep is interrupted).

    Example:
        >>> sweep = adlab.bench("rosenbrock", sizes=[3], modes=["reverse"], warn=False)
        >>> records = list(sweep)
        >>> [r.label for r in records]
        ['primal', 'reverse']
    """

    def __init__(self, gen: Iterator[Record], total: int) -> None:
        self._gen = gen
        self.total = total
        self.records: list[Record] = []

    def __iter__(self) -> Sweep:
        return self

    def __next__(self) -> Record:
        rec = next(self._gen)
        self.records.append(rec)
        return rec

    def _repr_html_(self) -> str | None:
        """In a notebook, a sweep shown (``adlab.bench(...)`` last in a cell) runs to its
        end, as ``list`` would, and shows its table (``adlab.format_table``, which the
        report layer above this one hands in as ``table_html``)."""
        from .floor import NoisyMachineWarning

        if table_html is None:
            return None
        with warnings.catch_warnings():  # the table says it under itself, in its words
            warnings.simplefilter("ignore", NoisyMachineWarning)
            for _ in self:
                pass
        return table_html(self.records)

    def close(self) -> None:
        """Stop the sweep; records already yielded stay in ``records``."""
        self._gen.close()
