"""Test-wide settings shared by ``tests/`` and the tutorial notebooks in ``notebooks/``.

The project's test command runs every notebook through nbval (``--nbval-lax``
in ``addopts``); quick mode shrinks the notebooks' sizes so each runs in about
a minute. The kernels nbval starts inherit this environment. Set
``ADLAB_QUICK=0`` to run the notebooks at full size.
"""

import json
import os
import shutil
import tempfile
from pathlib import Path

os.environ.setdefault("ADLAB_QUICK", "1")

# XLA compiles the tests' CPU programs without LLVM's optimisation passes: the same HLO
# (so the same flops, buffers and memory figures) and the same IEEE arithmetic, run a
# little slower, compiled about a quarter faster, and the suite is mostly compiling
# (test_sparse_front's two-color cases: 22.9 s of CPU at XLA's default level, 17.3 s at
# 0). Users, notebooks run by hand and the benchmarks keep XLA's default. Set before JAX or
# TensorFlow starts XLA; workers, kernels and subprocesses inherit it.
_XLA_LEVEL = "--xla_backend_optimization_level="
if _XLA_LEVEL not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {_XLA_LEVEL}0".strip()

# The tests keep a compile cache of their own, never the user's (~/.cache/adlab, or their
# ADLAB_CACHE_DIR): a test's outcome must not depend on what a user's cache holds, and a run
# must not fill a user's home. It is pytest's own cache folder's (.pytest_cache/d/
# adlab-compiled, in the checkout): a fresh clone starts empty, as CI does, and a later run
# loads what an earlier one compiled (the quick loop from a clean clone 3:31-3:48 cold,
# 1:19 with the cache a previous run left; README, "Set up"). Programs are keyed by the
# engine's source and the software's versions, so a changed engine never loads an old one;
# `pytest --cache-clear` empties it. Without pytest's cache (-p no:cacheprovider) a run
# makes one of its own and removes it at its end; ADLAB_TESTS_CACHE_DIR names another.
# Workers, notebook kernels and subprocesses inherit the variables; a test of the cache
# itself still takes a fresh tmp_path.
_RUN_CACHE = "ADLAB_TESTS_CACHE_DIR"
_made_cache = False

# nbval's reference outputs for # NBVAL_CHECK_OUTPUT cells live in
# notebooks/expected/, so the committed notebooks carry no outputs at all.
import pytest  # noqa: E402

import tests.nbval_expected  # noqa: E402,F401

#: slow tests by path or node id (the full command runs them; -m "not slow" leaves them out):
#: the browser, Binder's install, the framework start-up subprocesses, the slowest of the rest
#: (by --durations); every notebook too.
SLOW = (
    'tests/browser/',
    'tests/tutorial/test_binder.py::test_binder_requirements_install_and_the_quickstart_runs',
    'tests/engine/test_own_cache.py::test_a_run_of_the_tests_leaves_the_users_cache_as_it_was',
    'tests/engine/test_framework_startup.py::test_the_order_that_crashes_is_the_one_guarded_against',
    'tests/engine/test_framework_startup.py::test_adlabs_backends_load_triton_before_tensorflow_can_come',
    'tests/engine/test_framework_startup.py::test_tensorflow_imported_first_by_the_user_refuses_torch_compile_clearly',
    'tests/engine/test_framework_startup.py::test_tensorflows_numpy_behaviour_stays_inside_adlabs_calls',
    'tests/engine/test_framework_startup_quiet.py::test_loading_every_framework_through_adlab_prints_nothing',
    'tests/engine/test_framework_startup_quiet.py::test_a_level_the_user_chose_shows_what_it_shows',
    'tests/engine/test_framework_startup_quiet.py::test_a_models_error_in_tensorflow_brings_no_c_plus_plus_warning',
    'tests/engine/test_framework_startup_quiet.py::test_the_cli_prints_no_tensorflow_notices',
    'tests/engine/test_framework_startup_quiet.py::test_the_tutorials_first_framework_cells_show_no_stderr',
    'tests/tutorial/test_notebooks_clean.py::test_sidecar_references_are_compared_by_nbval',
    'tests/lab/test_lab_second_order.py::test_a_reverse_pattern_colored_through_the_front_says_so',
    'tests/lab/test_lab_second_order.py::test_a_sparse_run_shows_its_patterns_and_colors',
    'tests/lab/test_lab_second_order.py::test_a_sparse_hessian_shows_its_star_colored_pattern',
    'tests/lab/test_lab_frameworks.py::test_the_lab_draws_the_issue_bench_command_series',
    'tests/engine/test_sparse_front.py::test_ba_through_the_front_equals_the_dense_jacobian_in_two_colors',
    'tests/engine/test_sparse_front.py::test_ba_written_with_library_selections_still_goes_through_the_front',
    'tests/engine/test_sparse_front.py::test_the_front_is_left_out_where_its_pattern_cannot_be_held',
    'tests/engine/test_sparse.py::test_the_pattern_holds_an_entry_that_random_points_miss',
    'tests/engine/test_cache_linalg.py::test_linalg_programs_load_from_a_warm_cache_in_a_new_process',
    'tests/engine/test_engine_properties.py::test_modes_agree_on_random_smooth_compositions',
    'tests/measure/test_measure_colorings.py::test_reverse_passes_are_those_the_sparse_reverse_jacobian_takes',
)


#: each test's seconds in a cold quick loop from a clean clone on a quiet 2-core machine
#: (setup, call and teardown; the tests' cache empty at the start): a test that took longer
#: than SLOW_S there runs in the full command only, so that the quick loop stays within its
#: 4 minutes on a fresh machine. Re-measured with ``--record-durations`` (below).
DURATIONS = Path(__file__).parent / "tests" / "durations.json"
SLOW_S = 0.75


#: each test file's seconds in the full command (cold, from a clean clone, its two workers):
#: xdist hands whole files to the workers (--dist loadfile), and one long file handed out last
#: keeps a worker busy while the other waits; handed out longest first, the two finish
#: together. Re-measured with ``--record-file-seconds`` (below); a file not there yet goes last.
FILE_SECONDS = DURATIONS.with_name("file_seconds.json")


def _durations(path: Path = DURATIONS) -> dict[str, float]:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def pytest_addoption(parser):
    parser.addoption(
        "--record-durations", action="store_true",
        help=f"write each test's seconds into {DURATIONS.name} (tests not run keep theirs): "
        "run with -m 'not slow' from a clean clone on a quiet machine",
    )  # fmt: skip
    parser.addoption(
        "--record-file-seconds", action="store_true",
        help=f"write each test file's seconds into {FILE_SECONDS.name}: run the full command "
        "from a clean clone on a quiet machine",
    )  # fmt: skip


def _file(node: str) -> str:
    return node.split("::")[0]


@pytest.hookimpl(tryfirst=True)  # before -m "not slow" deselects
def pytest_collection_modifyitems(config, items):
    took = _durations()
    for item in items:
        node = item.nodeid
        if (_file(node).endswith(".ipynb") or any(node.startswith(s) for s in SLOW)
                or took.get(node, 0.0) > SLOW_S):  # fmt: skip
            item.add_marker(pytest.mark.slow)
    file_s = _durations(FILE_SECONDS)
    items.sort(key=lambda item: -file_s.get(_file(item.nodeid), 0.0))  # stable: a file's order


_took: dict[str, float] = {}


def pytest_runtest_logreport(report):
    # on the controller, the workers' reports too (xdist sends them)
    _took[report.nodeid] = _took.get(report.nodeid, 0.0) + report.duration


def pytest_sessionfinish(session):
    config = session.config
    if config.getoption("--record-durations") and not hasattr(config, "workerinput"):
        took = _durations()
        for node, seconds in _took.items():  # only those that may matter to SLOW_S are kept
            if seconds > SLOW_S / 3:
                took[node] = round(seconds, 2)
            else:
                took.pop(node, None)
        DURATIONS.write_text(json.dumps(dict(sorted(took.items())), indent=0) + "\n")
    if config.getoption("--record-file-seconds") and not hasattr(config, "workerinput"):
        files: dict[str, float] = {}
        for node, seconds in _took.items():
            files[_file(node)] = files.get(_file(node), 0.0) + seconds
        FILE_SECONDS.write_text(
            json.dumps({f: round(s, 1) for f, s in sorted(files.items())}, indent=0) + "\n"
        )


@pytest.hookimpl(trylast=True)  # after the cache provider (and its --cache-clear)
def pytest_configure(config):
    """The tests' cache: named by the caller or this run's controller, else pytest's own
    cache folder's, else one for this run (before xdist starts its workers)."""
    global _made_cache
    path = os.environ.get(_RUN_CACHE)
    if not path and getattr(config, "cache", None) is not None:
        path = str(config.cache.mkdir("adlab-compiled"))
    if not path:
        path, _made_cache = tempfile.mkdtemp(prefix="adlab-tests-cache-"), True
    os.environ[_RUN_CACHE] = os.environ["ADLAB_CACHE_DIR"] = path


def pytest_unconfigure(config):
    """The run that made the tests' cache removes it (workers and kernels have ended)."""
    if _made_cache and not hasattr(config, "workerinput"):
        shutil.rmtree(os.environ[_RUN_CACHE], ignore_errors=True)
