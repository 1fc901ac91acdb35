"""Test-wide settings shared by ``tests/`` and the tutorial notebooks in ``notebooks/``.

The project's test command runs every notebook through nbval (``--nbval-lax``
in ``addopts``); quick mode shrinks the notebooks' sizes so each runs in about
a minute. The kernels nbval starts inherit this environment. Set
``ADLAB_QUICK=0`` to run the notebooks at full size.
"""

import os

os.environ.setdefault("ADLAB_QUICK", "1")

# nbval's reference outputs for # NBVAL_CHECK_OUTPUT cells live in
# notebooks/expected/, so the committed notebooks carry no outputs at all.
import tests.nbval_expected  # noqa: E402,F401
