"""docs/conformance.md (issue 21 §5) is kept true: every requirement of the spec digest has
a row (pts/config/conformance.py), every row names a pytest node that exists and modules
that exist, and the document is what the generator gives."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pts.cli import conformance as command
from pts.cli.main import main
from pts.config import conformance
from pts.config.conformance import CONFIRMED, DEVIATION, READING, ROWS
from tests.support.helpers import REPO

# CI has ../shared beside the repository clone; a git worktree under <clone>/../wt/NAME
# finds it one level further up; $PTS_DIGEST names the file anywhere else.
PLACES = [REPO.parent / "shared" / "reference" / "pts-digest.md",
          REPO.parent.parent / "shared" / "reference" / "pts-digest.md"]


def digest_text() -> str:
    places = [Path(os.environ["PTS_DIGEST"])] if os.environ.get("PTS_DIGEST") else PLACES
    found = next((p for p in places if p.is_file()), None)
    if found is None:
        pytest.fail(f"the spec digest is missing (looked for {', '.join(map(str, places))}): "
                    "the conformance matrix cannot be checked without it; clone ../shared "
                    "beside the repository or set PTS_DIGEST to the file")
    return found.read_text(encoding="utf-8")


def requirements(text: str) -> list[str]:
    """The digest's requirements (pts/config/conformance.py's definition): the ### subsections
    of §5-§8, a ## section of §5-§8 without any, and each row of the §13 Readings table."""
    out = []
    sections = re.split(r"^## ", text, flags=re.M)
    for sec in sections:
        m = re.match(r"(\d+)\. ", sec)
        if not m:
            continue
        number = int(m[1])
        if 5 <= number <= 8:
            subs = re.findall(r"^### (\d+\.\d+) ", sec, re.M)
            out += [f"§{s}" for s in subs] or [f"§{number}"]
        elif number == 13:
            table = sec[sec.index("| item |"):]
            for line in table.splitlines()[2:]:
                if not line.startswith("|"):
                    break
                out.append("§13: " + line.split("|")[1].strip())
    return out


def test_the_digest_definition_finds_what_the_digest_holds():
    found = requirements(digest_text())
    assert found[0] == "§5" and "§6.1" in found and "§8.4" in found
    assert "§13: CBW alignment" in found and "§13: HIR wait-state names" in found
    assert len([r for r in found if r.startswith("§13")]) >= 12


def test_every_requirement_of_the_digest_has_exactly_one_row():
    have = [r.requirement for r in ROWS]
    missing = [r for r in requirements(digest_text()) if r not in have]
    assert not missing, f"no row in pts/config/conformance.py for {missing}"
    assert len(have) == len(set(have))
    stray = set(have) - set(requirements(digest_text()))
    assert not stray, f"rows for requirements the digest does not have: {stray}"


def test_rows_are_well_formed_and_name_modules_that_exist():
    for r in ROWS:
        assert r.status in (CONFIRMED, READING, DEVIATION), r
        assert r.test or r.status == DEVIATION, f"{r.requirement}: names no test"
        assert r.status != DEVIATION or r.note, f"{r.requirement}: a deviation says how"
        for module in r.where.split(", "):
            assert (REPO / module).is_file(), f"{r.requirement}: no module {module}"


def test_every_named_test_exists():
    """Collected by pytest itself (parametrised ids included), not guessed from names."""
    named = sorted({r.test for r in ROWS if r.test})
    files = sorted({t.split("::")[0] for t in named})
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "-p", "no:cacheprovider", *files], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    ids = done.stdout.split()
    # A parametrised test is a node too, without its ids (pytest runs every case of it).
    collected = set(ids) | {i.split("[")[0] for i in ids}
    missing = [t for t in named if t not in collected]
    assert not missing, f"rows name tests that pytest does not collect: {missing}"


def test_docs_conformance_md_is_what_the_generator_gives():
    doc = REPO / "docs" / "conformance.md"
    assert doc.read_text(encoding="utf-8") == conformance.render(), (
        "docs/conformance.md is out of date: run python -m pts conformance --write")


def test_readme_links_the_matrix():
    assert "docs/conformance.md" in (REPO / "README.md").read_text(encoding="utf-8")


def test_the_command_prints_the_matrix_as_docs_holds_it():
    """`python -m pts conformance` (the command the failure above names) run as a user runs
    it: exit 0 and exactly the document, nothing else on stdout or stderr."""
    done = subprocess.run([sys.executable, "-m", "pts", "conformance"], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert done.stdout == (REPO / "docs" / "conformance.md").read_text(encoding="utf-8")


def test_the_command_writes_the_matrix_with_write(tmp_path, monkeypatch, capsys):
    """--write through the command's own parser (pts.cli.main), its target moved to a temporary
    file so that the repository's copy is not touched: the file is the generator's text and
    its path is printed."""
    target = tmp_path / "conformance.md"
    monkeypatch.setattr(command, "DOC", target)
    assert main(["conformance", "--write"]) == 0
    assert target.read_text(encoding="utf-8") == conformance.render()
    assert capsys.readouterr().out == f"{target}\n"
