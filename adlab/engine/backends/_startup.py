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

**Notices.** Set before TensorFlow is imported, ``TF_CPP_MIN_LOG_LEVEL=2``
keeps its C++ INFO and WARNING lines (the oneDNN and CPU-instruction notices)
off the screen, and its errors on it. Two kinds of line still show on a
machine without a GPU, and TensorFlow offers no supported way to silence them
(tensorflow/tensorflow#100442, open): "Could not find cuda drivers" (logged
through absl before absl's logging is set up, where no level applies) and
"failed call to cuInit" (an error, when TensorFlow first looks for devices).
They say only that there is no GPU. PyTorch's compiler logs "No CUDA runtime
is found, using CUDA_HOME=..." (a warning from ``torch.utils.cpp_extension``'s
Python logger) on every CPU machine with a CUDA toolkit path: with no GPU,
that logger is set to show errors only (``quiet_torch``).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys

#: TensorFlow's C++ log level (0 all, 1 no INFO, 2 no WARNING, 3 no ERROR), set only if unset
TF_LOG_LEVEL = "2"


def triton_first() -> None:
    """Import Triton now if it is installed and TensorFlow is not loaded yet (see above)."""
    if "triton" in sys.modules or "tensorflow" in sys.modules:
        return
    if importlib.util.find_spec("triton") is not None:
        import triton  # noqa: F401


def before_tensorflow() -> None:
    """What must happen before ``import tensorflow``: Triton first, its log level set."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", TF_LOG_LEVEL)
    triton_first()


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


def quiet_torch(cuda: bool) -> None:
    """Without a GPU, keep ``torch.utils.cpp_extension``'s "No CUDA runtime" warning quiet."""
    if not cuda:
        logging.getLogger("torch.utils.cpp_extension").setLevel(logging.ERROR)
