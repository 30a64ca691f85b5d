"""README.md is a README and docs/ the manual (issue 31 §6): every option of pytest's
"snia-pts" group and every `python -m pts` command is documented in some docs/*.md page,
every docs/*.md page is linked from README.md, every relative link of the README and the
pages leads to a file that exists, and the README fits on two screens.

The options are taken from the plugins themselves (each one's pytest_addoption, called on a
recording parser), not scraped from `pytest --help`, so an option added anywhere in the group
is seen here the moment it exists.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import re

from pts.cli import main as pts_main
from tests.support.helpers import REPO

README = REPO / "README.md"
DOCS = REPO / "docs"
GROUP = "snia-pts"
MAX_README_LINES = 160      # issue 31: "about 150 lines", one or two screens
LINK = re.compile(r"\]\(([^)\s]+)\)")


class _Recorder:
    """Stands in for pytest's Parser and its OptionGroups: keeps the option names per group."""

    def __init__(self):
        self.groups: dict[str, list[str]] = {}

    def getgroup(self, name, description="", after=None):
        names = self.groups.setdefault(name, [])

        class Group:
            def addoption(self, *opts, **attrs):
                names.extend(o for o in opts if o.startswith("--"))

        return Group()

    def addoption(self, *opts, **attrs):
        self.groups.setdefault("", []).extend(o for o in opts if o.startswith("--"))

    def addini(self, *args, **kwargs):
        pass


def user_plugins() -> list[str]:
    """The plugins every `pytest pts/` run loads: the root conftest.py's pytest_plugins."""
    tree = ast.parse((REPO / "conftest.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in node.targets):
            return list(ast.literal_eval(node.value))
    raise AssertionError("conftest.py: no pytest_plugins list")


def pts_options() -> list[str]:
    parser = _Recorder()
    for name in user_plugins():
        hook = getattr(importlib.import_module(name), "pytest_addoption", None)
        if hook is not None:
            hook(parser)
    return parser.groups.get(GROUP, [])


def pts_commands() -> list[str]:
    parser = pts_main.build_parser([])
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return list(sub.choices)


def docs_pages():
    return sorted(DOCS.glob("*.md"))


def docs_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in docs_pages())


def mentioned(word: str, text: str) -> bool:
    """`word` in `text` as a whole option or command name (--resume is not --resume-x)."""
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


def test_the_option_group_is_found():
    options = pts_options()
    # the recorder must see the group pytest shows, or the test below would pass on nothing
    assert {"--device", "--destructive", "--datasheet", "--inventory", "--fio-port"} \
        <= set(options), options


def test_every_pts_option_is_documented_in_docs():
    text = docs_text()
    missing = [o for o in pts_options() if not mentioned(o, text)]
    assert not missing, (f"options of pytest's {GROUP!r} group no docs/*.md page mentions "
                         f"(docs/running.md has the table of options): {missing}")


def test_every_pts_command_is_documented_in_docs():
    commands = pts_commands()
    assert {"report", "serve", "demo"} <= set(commands), commands
    text = docs_text()
    missing = [c for c in commands if not mentioned(f"pts {c}", text)]
    assert not missing, f"`python -m pts` commands no docs/*.md page mentions: {missing}"


def test_every_docs_page_is_linked_from_the_readme():
    linked = {m.split("#", 1)[0] for m in LINK.findall(README.read_text(encoding="utf-8"))}
    pages = [f"docs/{p.name}" for p in docs_pages()]
    assert pages, "no docs/*.md pages"
    unlinked = [p for p in pages if p not in linked]
    assert not unlinked, f"docs pages README.md does not link: {unlinked}"


def test_every_relative_link_leads_to_a_file():
    broken = []
    for page in [README, *docs_pages()]:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            path = target.split("#", 1)[0]
            if not path or re.match(r"[a-z]+:", path):      # an anchor, http:, mailto:
                continue
            if not (page.parent / path).exists():
                broken.append(f"{page.relative_to(REPO)}: {target}")
    assert not broken, f"links to files that do not exist: {broken}"


def test_readme_fits_on_two_screens():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, (
        f"README.md has {len(lines)} lines (at most {MAX_README_LINES}): move detail to docs/")
