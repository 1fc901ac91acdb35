"""The README indexes the tutorials: one linked line per notebook, and the Binder badge."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))


def _tutorials_section() -> str:
    match = re.search(r"^## Tutorials\n(.*?)(?=^## )", README, re.S | re.M)
    assert match, "README has no '## Tutorials' section"
    return match.group(1)


def test_every_notebook_is_linked_once_with_its_question():
    items = re.split(r"\n- ", _tutorials_section())  # one bullet per tutorial (lines wrap)
    for name in NOTEBOOKS:
        found = [it for it in items if f"](notebooks/{name})" in it]
        assert len(found) == 1, f"{name}: linked {len(found)} times in the Tutorials section"
        words = found[0].split(f"](notebooks/{name}):", 1)[-1].split()
        assert len(words) >= 8, f"{name}: no line on the question it answers"


def test_binder_badge_opens_jupyterlab_at_the_quickstart():
    badge = re.search(r"\[!\[Binder\]\(https://mybinder\.org/badge_logo\.svg\)\]\((\S+)\)",
                      _tutorials_section())  # fmt: skip
    assert badge, "no Binder badge in the Tutorials section"
    assert badge.group(1).startswith("https://mybinder.org/v2/gh/")
    assert badge.group(1).endswith("?urlpath=lab/tree/notebooks/00_quickstart.ipynb")


def test_the_main_command_opens_the_quickstart():
    setup = README.split("## Set up", 1)[1]
    first = re.search(r"```bash\n(.+?)\n```", setup, re.S).group(1)
    assert first == (
        'python -m pip install -e ".[frameworks]" && '
        "JUPYTER_CONFIG_PATH=$PWD/jupyter-config "
        "jupyter lab --allow-root notebooks/00_quickstart.ipynb"
    )
