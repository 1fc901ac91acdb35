"""``adlab bench``: JSON, CSV and the table on stdout; cases; layering of the measure package.

Internals: the bench command's cases (measure.cases: CASES and their findings) and the
inline dispatch switch (measure.env: run_inline, cpu_async_dispatch) that --case and
--inline drive; the command line is their only public face.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

import adlab
from adlab.cli import build_parser, main
from adlab.measure.cases import CASES, findings

REPO = Path(adlab.__file__).resolve().parent.parent
FAST = ["--repeats", "3", "--quiet"]


def test_json_is_exactly_a_list_of_records_from_python_minus_m():
    proc = subprocess.run(
        [sys.executable, "-m", "adlab", "bench", "--model", "normal_logpdf", "--sizes", "2,3",
         "--modes", "forward,numeric[richardson]", "--json", *FAST],
        capture_output=True, text=True, cwd=REPO, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)  # the whole of stdout, nothing else
    assert [(d["n"], d["label"]) for d in data] == [
        (2, "primal"), (2, "forward"), (2, "numeric[richardson]"),
        (3, "primal"), (3, "forward"), (3, "numeric[richardson]"),
    ]  # fmt: skip
    assert adlab.from_json(proc.stdout)[1].error == data[1]["error"]


def test_csv_has_one_row_per_record(capsys):
    assert main(["bench", "--sizes", "2", "--modes", "reverse", "--csv", *FAST]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["label"] for r in rows] == ["primal", "reverse"]
    assert float(rows[1]["median_s"]) > 0 and rows[1]["env.precision"] == "float64"


def test_table_and_long_listing(capsys, tmp_path):
    model = tmp_path / "quartic.py"
    model.write_text(
        '"""x^4 summed."""\n\ndef setup(n, rng):\n    return (rng.normal(size=n),)\n\n'
        "def f(x):\n    return np.sum(x ** 4)\n"
    )
    code = main(["bench", "--model", str(model), "--sizes", "2,4", "--modes",
                 "forward,numeric(numpy)", "--long", *FAST])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert "quartic" in out and "n = 2" in out and "n = 4" in out
    assert "numeric[central](numpy)" in out and "loops x rep" in out


def test_every_case_name_is_accepted():
    for name in CASES:
        args = build_parser().parse_args(["bench", "--case", name, "--quick"])
        assert args.case == name
    with pytest.raises(SystemExit):
        build_parser().parse_args(["bench", "--case", "no-such-case"])


def test_a_case_runs_end_to_end_and_reads_its_findings(capsys):
    assert main(["bench", "--case", "jacobian", "--quick", *FAST]) == 0
    out = capsys.readouterr().out
    assert "Case jacobian (question 4)" in out
    for label in ("forward", "reverse", "numeric[central]", "complex-step"):
        assert label in out
    assert "fastest derivative at n=21" in out and "The question:" in out


def test_findings_name_growth_and_the_fastest():
    recs = [
        adlab.Record(
            model="m",
            mode=mode,
            n=n,
            label=mode,
            scheme=None,
            jit=True,
            precision="float64",
            backend="jax",
            median_s=t,
        )  # fmt: skip
        for mode, times in {"reverse": (1e-5, 1.1e-5), "forward": (5e-6, 5e-4)}.items()
        for n, t in zip((10, 1000), times, strict=True)
    ]
    text = "\n".join(findings(recs))
    assert "reverse: x1.1 from n=10 to n=1000" in text and "flat" in text
    assert "forward: x100" in text and "fastest derivative at n=10: forward" in text
    assert "reverse overtakes forward" in text


def test_bad_options_exit_2_with_a_message(capsys):
    assert main(["bench", "--sizes", "2", "--modes", "backward", "--quiet"]) == 2
    assert "unknown mode 'backward'" in capsys.readouterr().err
    assert main(["bench", "--case", "backends", "--model", "rosenbrock", "--quiet"]) == 2


def test_the_measure_layer_imports_no_widget_or_plotting_library():
    code = (
        "import adlab, adlab.measure, adlab.measure.cases, adlab.cli.bench, adlab.report\n"
        "from adlab.cli import build_parser; build_parser()\n"
        "import sys, json\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('ipywidgets', 'bokeh', 'jupyter_bokeh', 'jupyterlab', 'IPython'))))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


def test_inline_dispatch_is_set_before_jax_starts_and_recorded():
    proc = subprocess.run(
        [sys.executable, "-m", "adlab", "bench", "--sizes", "2", "--modes", "reverse",
         "--inline", "--json", *FAST],
        capture_output=True, text=True, cwd=REPO, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert {d["env"]["cpu_async_dispatch"] for d in json.loads(proc.stdout)} == {False}


def test_inline_dispatch_refuses_once_jax_has_started():
    from adlab.measure.env import cpu_async_dispatch, run_inline

    adlab.derivative(lambda x: (x**2).sum(), [1.0, 2.0])  # JAX is running now
    if cpu_async_dispatch():
        with pytest.raises(RuntimeError, match="already started"):
            run_inline()


# ------------------------------------------------------------ model errors
HEAD = "def setup(n, rng):\n    return (rng.normal(size=n),)\n\n\n"
ALL_MODES = "forward,reverse,numeric,numeric[richardson],complex-step"


def model_file(tmp_path, body: str) -> str:
    path = tmp_path / "user_model.py"
    path.write_text(HEAD + body)
    return str(path)


def test_one_mistake_is_printed_once_and_bench_exits_2(tmp_path, capsys):
    path = model_file(tmp_path, "def f(x):\n    total = np.sum(x)\n    return totl\n")
    code = main(["bench", "--model", path, "--sizes", "2,3", "--modes", ALL_MODES, *FAST])
    captured = capsys.readouterr()
    assert code == 2
    # 12 points (primal and 5 modes at 2 sizes), one mistake: said once, with what it hit
    assert captured.out.count("name 'totl' is not defined; did you mean 'total'?") == 1
    assert "[1] every point: line 7: NameError" in captured.out
    assert "[2]" not in captured.out and "skipped [1]" in captured.out
    assert "no point was measured" in captured.err


def test_json_output_keeps_stdout_json_and_says_the_error_once_on_stderr(tmp_path, capsys):
    path = model_file(tmp_path, "def f(x):\n    return np.sum(np.logaddexpp(x, x))\n")
    code = main(["bench", "--model", path, "--sizes", "2,3", "--modes", "forward,reverse",
                 "--json", *FAST])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 2
    records = json.loads(captured.out)
    assert len(records) == 6 and all(r["skipped"] for r in records)
    assert captured.err.count("np has no function 'logaddexpp'; did you mean 'logaddexp'?") == 1


def test_a_refusing_mode_is_listed_once_with_its_points(tmp_path, capsys):
    path = model_file(tmp_path, "def f(x):\n    return np.sum(np.linalg.norm(x) * x)\n")
    code = main(["bench", "--model", path, "--sizes", "2,3", "--modes", "reverse,complex-step",
                 *FAST])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0  # reverse mode was measured
    assert out.count("complex step needs an analytic f") == 1
    assert "[1] complex-step at n = 2, 3: line 6: complex step needs an analytic f, but " \
           "`np.linalg.norm` (it uses `" in out  # fmt: skip


def test_control_flow_advice_is_in_the_command_lines_terms(tmp_path, capsys):
    path = model_file(tmp_path, "def f(x):\n    if x[0] > 0:\n        return np.sum(x)\n"
                      "    return np.sum(x**2)\n")  # fmt: skip
    assert main(["bench", "--model", path, "--sizes", "2", "--modes", "reverse,numeric",
                 *FAST]) == 2  # fmt: skip
    out = capsys.readouterr().out
    assert "add --no-jit to run eagerly" in out  # reverse mode: eager works
    assert "--modes 'numeric(numpy)'" in out  # numeric batches with vmap
    assert "jit=False" not in out and "backend='numpy'" not in out
    # ... and the advice works
    assert main(["bench", "--model", path, "--sizes", "2", "--modes", "reverse", "--no-jit",
                 *FAST]) == 0  # fmt: skip
    assert "skipped" not in capsys.readouterr().out
