"""The docs build with warnings as errors, every internal link resolves, and the generated
pages (frameworks, command line, API) say what the source says.

The build is ``python -m sphinx -W -b html docs OUT``, as the README gives it: a broken
cross-reference, a public name without a docstring or a docstring reStructuredText misreads
fails it. It executes no notebook: the tutorials show what ``docs/render_tutorials.py``
stored. Links are checked offline, in the built HTML: every relative ``href`` and ``src``
names a file that was built, and every ``#anchor`` an id on that page.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

import adlab
from adlab.cli import build_parser
from adlab.engine.backends import FACTS

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = ("index", "getting-started", "model", "modes", "frameworks", "javascript", "measuring",
         "accuracy", "lab", "cli", "gradbench", "api", "design", "tutorials/index")  # fmt: skip


def _ext():
    spec = importlib.util.spec_from_file_location("adlab_docs", DOCS / "_ext" / "adlab_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("docs")
    run = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-b", "html", "-q", "-d", str(out / ".doctrees"),
         str(DOCS), str(out / "html")],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-6000:]
    return out / "html"


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        for key in ("href", "src"):
            if attrs.get(key) and not (tag == "script" and key == "src" and "://" in attrs[key]):
                self.links.append(attrs[key])


def _parse(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text(errors="replace"))
    return parser


@pytest.mark.slow
def test_the_docs_build_with_warnings_as_errors_and_hold_every_page(built):
    for page in PAGES:
        assert (built / f"{page}.html").is_file(), page
    for notebook in (ROOT / "notebooks").glob("*.ipynb"):
        rendered = DOCS / "tutorials" / f"{notebook.stem}.nbjson"
        if rendered.exists():
            assert (built / "tutorials" / f"{notebook.stem}.html").is_file(), notebook.name


@pytest.mark.slow
def test_every_internal_link_and_anchor_resolves(built):
    pages = {p: _parse(p) for p in built.rglob("*.html")}
    broken = []
    for page, parsed in pages.items():
        for link in parsed.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:")):
                continue  # outside the docs: not checked offline
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(built)}: {link} (no such file)")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{page.relative_to(built)}: {link} (no such anchor)")
    assert not broken, "\n".join(sorted(set(broken))[:40])


@pytest.mark.slow
def test_the_cli_page_has_every_subcommand_and_every_flag(built):
    text = (built / "cli.html").read_text()
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.choices and isinstance(a.choices, dict))
    for name, sub in subparsers.choices.items():
        assert f"adlab {name}" in text or name in text, name
        for action in sub._actions:
            for flag in set(action.option_strings) - {"-h", "--help"}:
                assert flag in text, f"adlab {name} {flag} is not on the CLI page"


@pytest.mark.slow
def test_the_frameworks_page_and_the_api_page_follow_the_source(built):
    frameworks = (built / "frameworks.html").read_text()
    for name, facts in FACTS.items():
        assert f"<p>{name}</p>" in frameworks and facts.label in frameworks, name
        for bug in facts.known_bugs:  # under "Known limits"
            assert all(issue in frameworks for issue in bug.issues), name
    api = (built / "api.html").read_text()
    for name in adlab.__all__:
        assert f'id="adlab.{name}"' in api, f"adlab.{name} is not in the API reference"


@pytest.mark.slow
def test_the_api_page_shows_no_private_parameter(built):
    # what autodoc drew for every signature on the page (tests/docs/test_api_signatures.py
    # holds inspect.signature itself): a Model once showed _functions, _setup, ...
    api = (built / "api.html").read_text()
    params = re.findall(r'<em class="sig-param">(.*?)</em>', api, re.S)
    shown = [re.sub(r"<[^>]+>", "", p) for p in params]
    assert shown, "no parameters found on the API page: the check would pass on nothing"
    private = [p for p in shown if p.lstrip("*").startswith("_")]
    assert not private, f"the API page shows private parameters: {private}"


def test_the_frameworks_table_is_read_from_the_facts():
    ext = _ext()
    rows = ext.framework_rows()
    assert [row[0] for row in rows] == list(FACTS)
    changed = dict(FACTS)
    changed["torch"] = dataclasses.replace(FACTS["torch"], how_jit="a compiler named in a test",
                                           precisions=("float16",))  # fmt: skip
    row = dict((r[0], r) for r in ext.framework_rows(changed))["torch"]
    assert row[ext.COLUMNS.index("compiled")] == "a compiler named in a test"
    assert row[ext.COLUMNS.index("precisions")] == "float16"


def test_the_known_limits_are_read_from_the_facts():
    ext = _ext()
    (torch,) = ext.known_bugs()
    assert torch.startswith("PyTorch: np.linalg.det") and "pytorch/pytorch#149694" in torch
    changed = dict(FACTS)
    changed["torch"] = dataclasses.replace(FACTS["torch"], known_bugs=())
    assert ext.known_bugs(changed) == []


def test_the_api_reference_is_generated_from_all():
    source = _ext().api_source()
    for name in adlab.__all__:
        assert f"adlab.{name}\n" in source or f"adlab.{name}" in source.split(), name
