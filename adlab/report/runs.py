"""A run as a file that says where it came from: ``save`` and ``load``.

A saved run is one JSON object::

    {"format": 1, "env": {...the machine...}, "source": {"model": "..."}, "records": [...]}

``env`` is ``adlab.measure.machine_environment()`` (CPU, cores, memory, GPUs and
drivers, OS, Python, the frameworks' versions, adlab's version and commit, Node's
version, the time it was saved); each record keeps its own ``env`` as measured
(``to_json``). ``source`` holds each model's source where it is known, for a report.

Format 0 is what adlab wrote before: ``to_json``'s bare list of records (the Lab's
old Export). It still loads: its ``env`` is read from the records. A file of a newer
format than this adlab reads is refused, with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .._format import jsonable
from .._vocab import Record
from . import from_json

#: the format ``save`` writes; ``load`` reads it and every older one
FORMAT = 1


class Run(list):
    """The records of one saved run (a ``list`` of ``adlab.Record``), and where they came from.

    Attributes:
        env: the machine and versions it was measured with (``machine_environment``).
        source: model name -> its source text, where known.
        format: the file's format (0: a bare list of records, as adlab wrote before).
        path: the file it was read from (None when made in memory).

    Example:
        >>> records = list(adlab.bench("rosenbrock", sizes=[3], modes=["reverse"], warn=False))
        >>> run = adlab.load(adlab.save(records, "run.json"))
        >>> isinstance(run, adlab.Run), len(run) == len(records)
        (True, True)
    """

    def __init__(self, records: Iterable[Record] = (), env: Mapping[str, Any] | None = None,
                 source: Mapping[str, str] | None = None, format: int = FORMAT,
                 path: Path | None = None) -> None:  # fmt: skip
        super().__init__(records)
        self.env = dict(env or {})
        self.source = dict(source or {})
        self.format = format
        self.path = path

    @property
    def name(self) -> str:
        """What names the run in a legend or a table: its machine and file ("vm: run.json")."""
        host = self.env.get("host") or self.env.get("cpu") or "?"
        return f"{host}: {self.path.name}" if self.path else str(host)


def _sources(records: list[Record], given: Mapping[str, str] | str | None) -> dict[str, str]:
    """Each model's source: as given (a text for the first model), else from the catalog."""
    if isinstance(given, str):
        return {records[0].model: given} if records else {}
    out = dict(given or {})
    from ..catalog import list_models, load_model

    known = set(list_models())
    for name in dict.fromkeys(r.model for r in records):
        if name not in out and name in known:
            out[name] = load_model(name).source or ""
    return out


def run_dict(records: Iterable[Record], source: Mapping[str, str] | str | None = None,
             env: Mapping[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """The saved run as a JSON-ready dict (what ``save`` writes)."""
    from ..measure.env import machine_environment

    if env is None:
        env = records.env if isinstance(records, Run) and records.env else machine_environment()
    records = list(records)
    return {
        "format": FORMAT,
        "env": jsonable(dict(env)),
        "source": _sources(records, source),
        "records": [jsonable(r.to_dict()) for r in records],
    }


def save(records: Iterable[Record], path: str | Path,
         source: Mapping[str, str] | str | None = None) -> Path:  # fmt: skip
    """Write a run to ``path`` as JSON (``"format": 1``) with the machine it ran on.

    ``source``: the model's source (a text) or each model's (name -> text); by default a
    catalog model's own. A ``Run`` that was loaded keeps its machine's ``env``; records
    of a sweep get this machine's (``adlab.measure.machine_environment``).

    Returns the path written. Example::

        records = list(adlab.bench("rosenbrock", sizes=[10, 100]))
        adlab.save(records, "run.json")
        run = adlab.load("run.json")  # the records, run.env["cpu"], run.env["versions"]

    Example:
        >>> records = list(adlab.bench("rosenbrock", sizes=[3], modes=["reverse"], warn=False))
        >>> path = adlab.save(records, "run.json")
        >>> path.name
        'run.json'
    """
    src = records if isinstance(records, Run) else list(records)
    path = Path(path)
    if path.parent != Path():
        path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(run_dict(src, source), indent=1), encoding="utf-8")
    return path


def load(path: str | Path) -> Run:
    """The run saved at ``path``: a ``Run``, the list of its records with ``.env`` (the
    machine), ``.source`` (the models' source) and ``.format``.

    Reads every format up to ``FORMAT`` (0: a bare JSON list of records, as
    ``to_json`` and the Lab's Export wrote before); a newer one raises ``ValueError``
    saying so. Example::

        run = adlab.load("run.json")
        print(len(run), run.env["cpu"], run.env["versions"]["jax"])

    Returns:
        A ``Run`` (a list of ``Record``) with ``.env``, ``.source`` and ``.format``.

    Example:
        >>> records = list(adlab.bench("rosenbrock", sizes=[3], modes=["reverse"], warn=False))
        >>> run = adlab.load(adlab.save(records, "run.json"))
        >>> [r.label for r in run]
        ['primal', 'reverse']
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not JSON ({exc}): not a run saved by adlab") from None
    return read_run(data, path)


def read_run(data: Any, path: Path | None = None) -> Run:
    """A ``Run`` from a saved run's parsed JSON (see ``load``)."""
    where = str(path) if path else "the run"
    if isinstance(data, list):  # format 0: to_json's list of records
        records = from_json(json.dumps(data))
        env = dict(records[0].env) if records else {}
        return Run(records, env, {}, 0, path)
    if not isinstance(data, dict) or "format" not in data:
        raise ValueError(f"{where} is not a run saved by adlab: no \"format\" key "
                         "(adlab.save writes one)")  # fmt: skip
    fmt = data["format"]
    if not isinstance(fmt, int) or fmt < 0:
        raise ValueError(f"{where} has format {fmt!r}: not a run saved by adlab")
    if fmt > FORMAT:
        by = (data.get("env") or {}).get("adlab", "a newer adlab")
        raise ValueError(f"{where} is format {fmt}, written by adlab {by}; this adlab reads "
                         f"formats up to {FORMAT}: upgrade adlab to read it")  # fmt: skip
    records = from_json(json.dumps(data.get("records", [])))
    return Run(records, data.get("env") or {}, data.get("source") or {}, fmt, path)
