"""Sphinx configuration for adlab's documentation.

Build: ``python -m sphinx -W -b html docs docs/_build/html`` (warnings are errors). The
frameworks table, the CLI reference and the API reference are generated from the source at
build time (``docs/_ext/adlab_docs.py``, sphinx-argparse, autodoc), so none can drift from it.
The tutorials are rendered from the outputs stored in ``docs/tutorials/`` by
``docs/render_tutorials.py``: nothing executes at build time (``nb_execution_mode = "off"``).
"""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE / "_ext"))

project = "adlab"
author = "adlab's authors"
copyright = f"{date.today().year}, {author}"

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.extlinks",
    "sphinxarg.ext",
    "adlab_docs",
]

exclude_patterns = ["_build", "**.ipynb_checkpoints", "README.md"]
# sphinx-argparse's domain cannot answer MyST's "any" look-ups; every link is still checked
suppress_warnings = ["myst.domains"]

# MyST: $math$, definition lists, headings as link targets (``page.md#a-heading``)
myst_enable_extensions = ["dollarmath", "deflist", "colon_fence"]
myst_heading_anchors = 3

# the stored outputs of docs/render_tutorials.py are shown as they are; nothing runs here
nb_execution_mode = "off"
# the tutorials' rendered copies (docs/render_tutorials.py) are notebooks with outputs, kept
# apart from the .ipynb files, which the project commits without outputs
nb_custom_formats = {".nbjson": ["nbformat.reads", {"as_version": 4}]}
nb_merge_streams = True

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
# the type aliases of adlab._vocab (Mode, Backend, ...) read as they are written
autodoc_type_aliases = {}
nitpicky = False

html_theme = "furo"
html_title = "adlab"
html_static_path = ["_static"]

# Files of the repository outside docs/ (benchmarks/README.md's figures, the notebooks' sources).
# OWNER is a placeholder, as in the README's Binder badge: put the repository's GitHub owner here.
REPOSITORY = "https://github.com/OWNER/adlab/blob/main/"
extlinks = {"repo": (REPOSITORY + "%s", "%s")}
