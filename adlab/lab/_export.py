"""Records to CSV and JSON files (the Lab's Export button)."""

from __future__ import annotations

import csv
import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

from .._types import Record

_NESTED = ("settings", "env")


def write_records(records: Sequence[Record], stem: Path) -> tuple[Path, Path]:
    """Write ``<stem>.csv`` (one row per record) and ``<stem>.json``; returns both paths.

    The CSV holds the scalar fields; the JSON holds everything, ``env`` included.
    """
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    rows = [r.to_dict() for r in records]
    csv_path, json_path = stem.with_suffix(".csv"), stem.with_suffix(".json")
    names = [f.name for f in dataclasses.fields(Record) if f.name not in _NESTED]
    with csv_path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=names, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    json_path.write_text(json.dumps({"records": rows}, indent=1, default=str), encoding="utf-8")
    return csv_path, json_path
