"""A run as a file: ``adlab.save`` and ``adlab.load``, the machine it names, formats old
and new, and ``adlab bench --save`` writing the same file."""

from __future__ import annotations

import json

import pytest

import adlab
from adlab import Record
from adlab.cli import main


def rec(label: str, n: int, t: float, **kw) -> Record:
    kw.setdefault("mode", label)
    return Record(model="normal_logpdf", n=n, label=label, scheme=None, jit=True,
                  precision="float64", backend="jax", median_s=t, median_lo_s=t * 0.98,
                  median_hi_s=t * 1.02, env={"noise": 0.05, "sweep": "a"}, **kw)  # fmt: skip


def test_a_saved_run_loads_with_its_machine_and_source(tmp_path):
    records = [rec("reverse", 10, 1e-5), rec("forward", 10, 2e-5, note="x")]
    path = adlab.save(records, tmp_path / "run.json")
    data = json.loads(path.read_text())
    assert data["format"] == 1
    env = data["env"]
    for key in ("host", "cpu", "cpu_count", "memory_bytes", "gpus", "os", "python", "versions",
                "adlab", "adlab_commit", "node", "saved_at"):  # fmt: skip
        assert key in env, key
    assert env["versions"]["jax"] and env["cpu"]
    run = adlab.load(path)
    assert run == records and run.format == 1 and run.env == env
    assert "def f(" in run.source["normal_logpdf"]  # a catalog model's own source
    assert run.name == f"{env['host']}: run.json"
    # saved again, a loaded run keeps the machine it was measured on
    again = adlab.load(adlab.save(run, tmp_path / "again.json"))
    assert again.env == env and again == records


def test_an_old_bare_list_still_loads(tmp_path):
    """Format 0: the bare list to_json and the Lab's Export wrote before."""
    records = [rec("reverse", 10, 1e-5)]
    (tmp_path / "old.json").write_text(adlab.to_json(records))
    run = adlab.load(tmp_path / "old.json")
    assert run == records and run.format == 0 and run.env == records[0].env
    assert adlab.from_json(adlab.save(records, tmp_path / "new.json").read_text()) == records


def test_a_newer_format_is_refused_with_the_reason(tmp_path):
    path = tmp_path / "future.json"
    path.write_text(json.dumps({"format": 2, "env": {"adlab": "9.0"}, "records": []}))
    with pytest.raises(ValueError, match=r"format 2, written by adlab 9\.0.*up to 1.*upgrade"):
        adlab.load(path)
    path.write_text(json.dumps({"records": []}))
    with pytest.raises(ValueError, match="not a run saved by adlab"):
        adlab.load(path)
    path.write_text("{")
    with pytest.raises(ValueError, match="not JSON"):
        adlab.load(path)


def test_bench_save_writes_the_same_file(tmp_path, capsys):
    path = tmp_path / "run.json"
    argv = ["bench", "--model", "rosenbrock", "--sizes", "3", "--modes", "reverse",
            "--budget", "0.5", "--repeats", "3", "--quiet", "--save", str(path)]  # fmt: skip
    assert main(argv) == 0
    run = adlab.load(path)
    assert run.format == 1 and {r.label for r in run} == {"primal", "reverse"}
    assert "rosenbrock" in run.source and "saved 2 records" in capsys.readouterr().err
