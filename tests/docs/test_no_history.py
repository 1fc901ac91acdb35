"""The README and the docs say what adlab does now; how it got there is in CHANGELOG.md.

A reader has no use for "issue 31" or "earlier this stop": the project's issue numbers and its
working sessions belong to the changelog. Other projects' issues stay, named with their
repository (``jax-ml/jax#19822``) or by their URL.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")),
         *sorted((ROOT / "docs").rglob("*.rst"))]  # fmt: skip
#: "issue 31", "issues 32-34", "issue-25" (a heading's anchor), "issue #15", or "#15" alone;
#: not "owner/repo#15", a URL's ".../issues/15", "page.md#15" nor "&#39;"
ISSUE = re.compile(r"\bissues?[ -]#?\d+|(?<![\w/.&-])#\d+\b", re.I)
#: the project's working sessions ("stops"), which a reader never saw
SESSION = re.compile(r"\b(?:this|last|next|previous|that) (?:stop|session)\b|\bstop \d+\b", re.I)

#: what the two patterns must catch, and what they must leave alone
HISTORY = ("With issues 32-34 (memory", "Before them (issue 31)", "see issue #15", "(#33)",
           "page.md#figures-issue-25-js", "Earlier this stop,", "at stop 14")  # fmt: skip
NOT_HISTORY = ("(jax-ml/jax#19822's confusion)", "pytorch/pytorch#149694", "it&#39;s",
               "https://github.com/jax-ml/jax/issues/19822", "[the issue](page.md#12-x)",
               "color #1f77b4", "Stop ends the run", "stops once the interval")  # fmt: skip


def _found(text: str) -> list[str]:
    return [m.group() for m in (*ISSUE.finditer(text), *SESSION.finditer(text))]


def test_there_are_pages_to_check():
    assert (ROOT / "README.md") in PAGES and len(PAGES) > 5


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_page_names_no_issue_of_ours_and_no_working_session(page):
    lines = [f"{i}: {found}" for i, line in enumerate(page.read_text().splitlines(), 1)
             if (found := _found(line))]  # fmt: skip
    assert not lines, f"{page.name}: move this history to CHANGELOG.md: {lines}"


def test_what_is_history_and_what_is_not():
    assert [h for h in HISTORY if not _found(h)] == []
    assert [o for o in NOT_HISTORY if _found(o)] == []
