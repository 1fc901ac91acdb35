"""PyTorch and TensorFlow in one process: the order they load in, and their start-up notices.

**Order.** Triton (which PyTorch's compiler, ``torch.compile``, loads on its
first call) and TensorFlow each bring an LLVM. Triton loaded after TensorFlow
crashes the process with a segmentation fault; loaded first, both live.
Measured here (torch 2.14, triton 3.8, TensorFlow 2.21, each in a fresh
process): ``import tensorflow; import triton`` crashes, and so does a first
``torch.compile`` call after ``import tensorflow``, whether PyTorch was
imported before TensorFlow or after; ``import triton; import tensorflow`` and
a ``torch.compile`` call after both run. So whichever of adlab's PyTorch and
TensorFlow backends loads first imports Triton (0.2 s), if it is installed and
TensorFlow is not loaded yet; and where the user's own code imported
TensorFlow before that, ``jit=True`` on PyTorch is refused with what to do
(``check_compile_order``) instead of crashing the kernel.

**Notices.** Importing TensorFlow writes lines straight to file descriptor 2,
below Python, so they reach a notebook as a red stderr block and a terminal
as noise. ``TF_CPP_MIN_LOG_LEVEL`` 2 (no INFO or WARNING) covers the lines it
logs once its logging is set up (the CPU-instruction notice; a "Local
rendezvous is aborting" warning beside each error a model raises). adlab
imports TensorFlow at 2 unless the user chose a level; JAX's import sets "1"
where none is set, so "1" with JAX loaded counts as JAX's (``users_level``).
TensorFlow reads the level while it loads; the variable is then put back. No
level covers the lines logged before that (absl's "All log messages before
absl::InitializeLog() ..." and, once per library, the oneDNN notice and,
without a GPU, "Could not find cuda drivers"): measured with TensorFlow 2.21,
at 2 or 3 they still show (tensorflow/tensorflow#100442, open). And without a
GPU its first look for devices logs an error, "failed call to cuInit", that
says only that there is no GPU; hiding devices does not stop it
(``CUDA_VISIBLE_DEVICES`` empty or -1: the line stays), and level 3 would
hide every real error with it. So ``before_tensorflow`` imports TensorFlow,
and lists its devices, with file descriptor 2 sent to a file, then writes
back every line but those: absl's lines below the level in effect (the level
applied to the lines TensorFlow wrote before it read it) and, where the user
left the level to adlab and this machine has no NVIDIA device at all
(``no_gpu_here``), the cuInit error. Whatever else was written meanwhile (a
real error, a Python warning) comes out as written, after the import.
``TF_ENABLE_ONEDNN_OPTS=0`` would silence the oneDNN notice too, but it
changes TensorFlow's kernels; adlab leaves them as TensorFlow chose.
PyTorch's compiler logs "No CUDA runtime is found, using CUDA_HOME=..." (a
warning from ``torch.utils.cpp_extension``'s Python logger) on every CPU
machine with a CUDA toolkit path: with no GPU, that logger is set to show
errors only (``quiet_torch``).
"""

from __future__ import annotations

import contextlib
import glob
import importlib.util
import logging
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator

#: TensorFlow's C++ log level (0 all, 1 no INFO, 2 no WARNING, 3 no ERROR), set only if unset
TF_LOG_LEVEL = "2"
_LEVEL_VAR = "TF_CPP_MIN_LOG_LEVEL"
#: the level JAX's import sets where none is set: it also reaches TensorFlow
_JAX_LEVEL = "1"

#: a line of absl's log (TensorFlow's C++ log): severity, date, time, thread, file:line]
_ABSL_LINE = re.compile(rb"([IWEF])\d{4} [\d:.]+\s+\d+ [^\]\s]+\] ")
_SEVERITY = {b"I": 0, b"W": 1, b"E": 2, b"F": 3}
#: absl's own warning, once per library, that it logs to stderr until it is set up
_ABSL_BANNER = (
    b"WARNING: All log messages before absl::InitializeLog() is called are written to STDERR"
)
#: the error of TensorFlow's first look for a GPU, where there is none
_NO_GPU_ERROR = b"failed call to cuInit"


def triton_first() -> None:
    """Import Triton now if it is installed and TensorFlow is not loaded yet (see above)."""
    if "triton" in sys.modules or "tensorflow" in sys.modules:
        return
    if importlib.util.find_spec("triton") is not None:
        import triton  # noqa: F401


#: chooses TensorFlow's CPU allocator, read as TensorFlow starts
BFC_VARIABLE = "TF_CPU_ALLOCATOR_USE_BFC"


def before_tensorflow() -> None:
    """What must happen before the backend's ``import tensorflow``: Triton first, and
    TensorFlow imported at adlab's log level (unless the user chose one) with its start-up
    notices held back (see above)."""
    triton_first()
    if "tensorflow" in sys.modules:  # the user's own import: what it printed is printed
        return
    chosen = users_level()
    try:
        level = int(chosen or TF_LOG_LEVEL)
    except ValueError:  # TensorFlow reads what it cannot parse as 0
        level = 0
    drop = notices(level, no_gpu=chosen is None and no_gpu_here())
    # TensorFlow's CPU allocator keeps statistics (the memory records' counter) only as
    # its BFC allocator, chosen by this variable when TensorFlow starts; a user's value
    # stands (backends/tensorflow/memory.py says what is then not counted)
    os.environ.setdefault(BFC_VARIABLE, "true")
    before = os.environ.get(_LEVEL_VAR)
    os.environ[_LEVEL_VAR] = chosen or TF_LOG_LEVEL
    try:
        with written_back(drop):
            import tensorflow as tf

            tf.config.list_physical_devices()  # its first look for devices: the cuInit error
    finally:
        # TensorFlow read its level while loading (measured: a warning logged later stays
        # quiet); JAX's C++ and child processes keep the value they had
        _restore(_LEVEL_VAR, before)


def users_level() -> str | None:
    """``TF_CPP_MIN_LOG_LEVEL`` as the user set it, or None. JAX's import sets it to "1"
    where unset (``jax/__init__.py``), and adlab imports JAX first: "1" with JAX loaded
    counts as JAX's (a user who wants TensorFlow's warnings sets 0)."""
    value = os.environ.get(_LEVEL_VAR)
    if value == _JAX_LEVEL and "jax" in sys.modules:
        return None
    return value


def _restore(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def no_gpu_here() -> bool:
    """True where this machine plainly has no NVIDIA GPU: Linux with no ``/dev/nvidia*``
    device and no ``/dev/dxg`` (WSL's GPU). Elsewhere it cannot tell: False."""
    if not sys.platform.startswith("linux"):
        return False
    return not glob.glob("/dev/nvidia*") and not os.path.exists("/dev/dxg")


def notices(level: int, no_gpu: bool) -> Callable[[bytes], bytes]:
    """What to write back of a line TensorFlow's loading wrote: all of it but absl's lines
    below ``level`` (its banner counts as a warning) and, with ``no_gpu``, the cuInit error.
    A record may follow another writer's text on the same line (a progress bar redrawn
    with a carriage return): that text stays."""

    def kept(line: bytes) -> bytes:
        at = line.find(_ABSL_BANNER)
        if at >= 0:
            return line if _SEVERITY[b"W"] >= level else line[:at]
        m = _ABSL_LINE.search(line)
        if m is None:
            return line
        if _SEVERITY[m[1]] < level or (no_gpu and _NO_GPU_ERROR in line[m.start() :]):
            return line[: m.start()]
        return line

    return kept


@contextlib.contextmanager
def written_back(keep: Callable[[bytes], bytes]) -> Iterator[None]:
    """Run the block with file descriptor 2 sent to a file, then write back to it what
    ``keep`` keeps of each line, in order (C++ writes there, below Python)."""
    try:
        saved = os.dup(2)
    except OSError:  # no stderr at all (a detached process): nothing reaches anyone
        yield
        return
    _flush_stderr()
    held = tempfile.TemporaryFile()
    try:
        os.dup2(held.fileno(), 2)
        yield
    finally:
        _flush_stderr()  # Python's own lines of that time, into the file, in order
        os.dup2(saved, 2)
        os.close(saved)
        held.seek(0)
        out = b"".join(keep(line) for line in held.read().splitlines(keepends=True))
        held.close()
        with contextlib.suppress(OSError):  # a stderr closed meanwhile: nothing to tell
            while out:
                out = out[os.write(2, out) :]


def _flush_stderr() -> None:
    if sys.stderr is not None:
        sys.stderr.flush()


def check_compile_order() -> None:
    """Refuse ``torch.compile`` where its Triton would load after TensorFlow (a crash).

    Raises:
        RuntimeError: TensorFlow is loaded and Triton (installed) is not.
    """
    if "tensorflow" not in sys.modules or "triton" in sys.modules:
        return
    if importlib.util.find_spec("triton") is None:
        return
    raise RuntimeError(
        "PyTorch's compiler (jit=True) would load Triton after TensorFlow, which this "
        "process imported first; in that order Triton crashes the process (a segmentation "
        "fault). Restart the kernel (or process) and import adlab before TensorFlow "
        "(or `import triton` first), or run PyTorch eagerly (jit=False)"
    )


#: the lines PyTorch's profiler (Kineto) writes to file descriptor 2 at each start and
#: stop ("USDT:... profiler_start", "STAGE:... Completed Stage"), and its look for a GPU;
#: and PyTorch's warning that a block allocated before the profile was freed in it (the
#: profile then misses that free: a peak read from it errs high, never low)
_KINETO_LINE = re.compile(
    rb"^(USDT|STAGE):\S+ \S+ \d+:\d+ \S+\.cpp:\d+\] "
    rb"|^\[W\d+ [\d:.]+ CPUAllocator\.cpp:\d+\] Memory block of unknown size"
)
_KINETO_NO_GPU = b"gpuGetDeviceCount failed"


def kineto_quiet() -> contextlib.AbstractContextManager:
    """A block that runs PyTorch's profiler without its start and stop notices (and,
    with no NVIDIA device here, its failed look for one): what adlab measures with it
    once per point is not the user's to read. Every other line is written back."""
    no_gpu = no_gpu_here()

    def kept(line: bytes) -> bytes:
        if _KINETO_LINE.match(line) or (no_gpu and _KINETO_NO_GPU in line):
            return b""
        return line

    return written_back(kept)


def quiet_torch(cuda: bool) -> None:
    """Without a GPU, keep ``torch.utils.cpp_extension``'s "No CUDA runtime" warning quiet."""
    if not cuda:
        logging.getLogger("torch.utils.cpp_extension").setLevel(logging.ERROR)
