"""The README does its job in a screen or two and keeps what other checks read: at most 150
lines, the Lab's picture (taken by the browser test), the two commands, a model file early on,
and links into the docs that resolve. Everything else lives in docs/."""

from __future__ import annotations

import re
import struct
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def test_the_readme_is_at_most_150_lines():
    assert len(README.splitlines()) <= 150, "move the detail into a page under docs/"


def test_the_readme_shows_the_labs_picture_the_browser_test_takes():
    assert "](docs/_static/lab.png)" in README
    png = (ROOT / "docs" / "_static" / "lab.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "docs/_static/lab.png is not a PNG"
    width, height = struct.unpack(">II", png[16:24])
    assert (width, height) == (1400, 1000), "take it with ADLAB_DOCS_SCREENSHOT=1 (browser test)"


def test_the_test_command_is_the_one_ci_runs():
    commands = re.findall(r"```bash\n(.+?)\n```", README.split("## Set up", 1)[1], re.S)
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert commands[1] == ci


def test_a_model_file_comes_early():
    lines = README.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("def setup(n, rng)"))
    assert at < 120


def test_every_link_into_the_repository_resolves():
    for target in re.findall(r"\]\(((?!https?://)[^)#\s]+)", README):
        assert (ROOT / target).exists(), target
