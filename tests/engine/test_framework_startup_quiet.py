"""Loading a framework through adlab prints nothing the user did not ask for
(``backends._startup``): not in a fresh process, not on the CLI, not in the tutorials'
first framework cells in a fresh Jupyter kernel; lines that are not start-up notices, and
those the user asked for with ``TF_CPP_MIN_LOG_LEVEL``, still come out.

Internals: the start-up notices' filter itself (backends._startup: notices, written_back,
users_level), fed the lines each framework prints; the user sees only its absence.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from adlab.engine.backends import _startup

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
#: a line of TensorFlow's C++ log (absl's format), or absl's own banner
ABSL = re.compile(r"^([IWEF]\d{4} [\d:.]+\s+\d+ \S+\]|WARNING: All log messages before absl)",
                  re.M)  # fmt: skip

ONEDNN = (b"I0000 00:00:1795619359.108983    8299 port.cc:153] oneDNN custom operations are on."
          b" You may see slightly different numerical results\n")  # fmt: skip
BANNER = b"WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n"
CUINIT = (b"E0000 00:00:1795619360.767358    8299 cuda_platform.cc:52] failed call to cuInit: "
          b"INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)\n")  # fmt: skip
REAL_ERROR = b"E0000 00:00:1795619360.767358    8299 op_kernel.cc:1] a real error\n"
PYTHON_LINE = b"UserWarning: something the user should see\n"


#: not in a user's environment: a TensorFlow log level (JAX's import, in this process, set
#: one), and pytest's own variable (with it, a kernel does not forward file descriptor 2
#: to the notebook: ipykernel's OutStream leaves that to pytest's capture)
NOT_THE_USERS = ("TF_CPP_MIN_LOG_LEVEL", "PYTEST_CURRENT_TEST")


def _env() -> dict[str, str]:
    """This environment as a user's fresh one (``NOT_THE_USERS``)."""
    return {k: v for k, v in os.environ.items() if k not in NOT_THE_USERS}


def _run(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, timeout=600,
                          env=env or _env())  # fmt: skip


PROGRESS = b"\rbench:  50%|#####     | 1/2"  # redrawn with \r, no newline: the next line joins it


def _written(level: int, no_gpu: bool, capfd: pytest.CaptureFixture) -> bytes:
    with _startup.written_back(_startup.notices(level, no_gpu)):
        for line in (BANNER, ONEDNN, PYTHON_LINE, PROGRESS, CUINIT, REAL_ERROR):
            os.write(2, line)
    return capfd.readouterr().err.encode()


def test_start_up_notices_are_held_back_and_everything_else_written_back(capfd):
    assert _written(2, no_gpu=True, capfd=capfd) == PYTHON_LINE + PROGRESS + REAL_ERROR


def test_what_was_written_comes_back_when_the_import_fails(capfd):
    with pytest.raises(ImportError):
        with _startup.written_back(_startup.notices(2, no_gpu=True)):
            os.write(2, ONEDNN + REAL_ERROR)
            raise ImportError("a broken install")
    assert capfd.readouterr().err.encode() == REAL_ERROR


def test_the_cuinit_error_stays_where_a_gpu_may_be(capfd):
    kept = PYTHON_LINE + PROGRESS + CUINIT + REAL_ERROR
    assert _written(2, no_gpu=False, capfd=capfd) == kept


def test_a_users_level_of_zero_keeps_every_line(capfd):
    everything = BANNER + ONEDNN + PYTHON_LINE + PROGRESS + CUINIT + REAL_ERROR
    assert _written(0, no_gpu=False, capfd=capfd) == everything


def test_the_users_own_level_is_told_from_jaxs_default(monkeypatch):
    import jax  # noqa: F401 - loaded, as adlab loads it: its "1" is not the user's

    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "1")
    assert _startup.users_level() is None
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "0")
    assert _startup.users_level() == "0"
    monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL")
    assert _startup.users_level() is None


LOAD_ALL = """
import adlab
m = adlab.load_model("normal_logpdf")
for backend in ("jax", "torch", "tensorflow", "autograd"):
    print(backend, adlab.derivative(m, *m.setup(3), backend=backend).shape)
"""


@pytest.mark.slow
def test_loading_every_framework_through_adlab_prints_nothing():
    out = _run([sys.executable, "-c", LOAD_ALL])
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.count("(3,)") == 4, out.stdout
    assert out.stderr == ""


def test_a_level_the_user_chose_shows_what_it_shows():
    """The user's TF_CPP_MIN_LOG_LEVEL=0 asks for TensorFlow's INFO lines: they come."""
    code = "from adlab.engine.backends import get_backend\nget_backend('tensorflow')\n"
    out = _run([sys.executable, "-c", code], env={**_env(), "TF_CPP_MIN_LOG_LEVEL": "0"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert re.search(r"^I\d{4} ", out.stderr, re.M), out.stderr[-2000:]


def test_a_models_error_in_tensorflow_brings_no_c_plus_plus_warning():
    """TensorFlow logs a 'Local rendezvous is aborting' WARNING beside an error it raises
    (at JAX's level 1): at adlab's level the user gets adlab's message and no such line."""
    code = """
import adlab
m = adlab.Model.from_source('''
def setup(n, rng):
    return (rng.normal(size=n),)

def f(x):
    return np.sum(np.reshape(x, (2,)))
''')
try:
    adlab.derivative(m, *m.setup(3), backend="tensorflow")
except adlab.ModelError as exc:
    print("refused:", str(exc).splitlines()[0])
"""
    out = _run([sys.executable, "-c", code])
    assert "refused: line 6: InvalidArgumentError" in out.stdout, out.stderr[-2000:]
    assert not ABSL.search(out.stderr), out.stderr[-2000:]


def test_the_cli_prints_no_tensorflow_notices():
    out = _run([sys.executable, "-m", "adlab", "bench", "--model", "normal_logpdf",
                "--sizes", "10", "--modes", "reverse(tensorflow)"])  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert "reverse(tensorflow)" in out.stdout
    # stderr holds the progress bar (redrawn with \r) and nothing else
    rest = [s for s in re.split(r"[\r\n]", out.stderr) if s.strip() and not s.startswith("bench:")]
    assert rest == [], out.stderr[-2000:]


def _cells_up_to_first_framework_cell(name: str, marker: str) -> list[str]:
    """The notebook's code cells, from the first to the one that first loads TensorFlow or
    PyTorch through adlab (found by its text, so that an edit of the notebook moves it)."""
    import nbformat

    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    first = next(i for i, src in enumerate(code) if marker in src)
    return code[: first + 1]


@pytest.mark.slow
# 01's first framework cell measures reverse(tensorflow) through adlab.bench, as 03's does
# (the same first load, so 03 is not run again); 05's loads every framework at once
@pytest.mark.parametrize(("name", "marker"), [
    ("01_gradients_within_a_frame", '"reverse(tensorflow)"'),
    ("05_platform_and_precision", "tutorial.frameworks_table()"),
])  # fmt: skip
def test_the_tutorials_first_framework_cells_show_no_stderr(name, marker):
    """Each in a fresh kernel, as in JupyterLab: the C++ lines TensorFlow writes below
    Python reach the notebook too (ipykernel forwards file descriptor 2)."""
    import nbformat
    from nbclient import NotebookClient

    cells = _cells_up_to_first_framework_cell(name, marker)
    # the machine's load is no start-up notice: a busy test machine warns of it, rightly
    setup = ("import warnings, adlab\n"
             "warnings.filterwarnings('ignore', category=adlab.NoisyMachineWarning)")  # fmt: skip
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(s) for s in (setup, *cells)],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}},
    )
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOKS)}})  # fmt: skip
    with client.setup_kernel(env=_env()):
        for i, cell in enumerate(nb.cells):
            client.execute_cell(cell, i)
    stderr = ["".join(o.text for o in c.outputs if o.get("name") == "stderr") for c in nb.cells]
    assert not any(stderr), "\n---\n".join(s for s in stderr if s)[-3000:]
