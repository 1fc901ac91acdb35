"""``python -m adlab`` is the ``adlab`` command."""

import sys

from .cli import main

sys.exit(main())
