"""Memory on the command line (issue 32): ``adlab bench`` prints each point's peak and
residuals, ``--json`` and ``--csv`` carry ``peak_bytes``, ``residual_bytes`` and
``memory_counter``; ``adlab advise --memory-limit`` rules out what does not fit.

Short real sweeps; no test asserts how much memory anything takes, only that it is
measured and said.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

import adlab
from adlab.cli import main

FAST = ["--model", "normal_logpdf", "--sizes", "3,30", "--modes", "forward,reverse",
        "--repeats", "3", "--budget", "1", "--quiet"]  # fmt: skip
MEMORY = ("peak_bytes", "residual_bytes", "memory_counter")
pytestmark = pytest.mark.filterwarnings("ignore::adlab.NoisyMachineWarning")


def test_json_carries_each_points_memory(capsys):
    assert main(["bench", *FAST, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert all(set(MEMORY) <= set(d) for d in data)
    assert all(d["peak_bytes"] > 0 and d["memory_counter"] for d in data), data
    reverse = [d for d in data if d["label"] == "reverse"]
    forward = [d for d in data if d["label"] == "forward"]
    assert all(d["residual_bytes"] is not None for d in reverse)  # a reverse pass keeps some
    assert all(d["residual_bytes"] is None for d in forward)  # a forward pass none
    back = adlab.from_json(json.dumps(data))  # and they read back into records
    assert [r.peak_bytes for r in back] == [d["peak_bytes"] for d in data]


def test_csv_carries_each_points_memory(capsys):
    assert main(["bench", *FAST, "--csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows and all(set(MEMORY) <= set(row) for row in rows)
    assert all(float(row["peak_bytes"]) > 0 and row["memory_counter"] for row in rows)
    assert {row["residual_bytes"] == "" for row in rows if row["label"] == "forward"} == {True}
    assert all(float(row["residual_bytes"]) >= 0 for row in rows if row["label"] == "reverse")


def test_the_table_prints_memory_with_units(capsys):
    assert main(["bench", *FAST]) == 0
    out = capsys.readouterr().out
    assert "memory per call: peak above the inputs" in out
    grid = out[out.index("memory per call") :].splitlines()
    reverse = next(line for line in grid if line.startswith("reverse "))
    assert reverse.count("(") == 2 and any(u in reverse for u in (" B", " KB", " MB"))


def test_advise_rules_out_what_the_memory_limit_does_not_hold(capsys):
    code = main(["advise", "--n", "3", "--modes", "forward,reverse", "--budget", "1",
                 "--memory-limit", "1", "--json"])  # fmt: skip
    advice = json.loads(capsys.readouterr().out)
    assert code == 2 and advice["best"] is None and advice["memory_limit"] == 1.0
    assert set(advice["ruled_out"]) == {"forward", "reverse"}
    assert advice["describe"].startswith("At n = 3 on normal_logpdf: no mode fits the memory")


def test_advise_reads_a_limit_with_units_and_refuses_one_without_sense(capsys):
    code = main(["advise", "--n", "3", "--modes", "reverse", "--budget", "1",
                 "--memory-limit", "1.5 GB", "--json"])  # fmt: skip
    advice = json.loads(capsys.readouterr().out)
    assert code == 0 and advice["memory_limit"] == 1.5e9 and advice["best"] == "reverse"
    with pytest.raises(SystemExit) as exit_:
        main(["advise", "--n", "3", "--memory-limit", "lots"])
    assert exit_.value.code == 2 and "a size is bytes" in capsys.readouterr().err
