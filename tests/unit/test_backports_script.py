""".ci/backports.sh (README command 2's first step): Debian's backports suite from the source
apt already uses, on a copy of apt's configuration (APT_ETC, OS_RELEASE: nothing on the host
is read or written)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.helpers import REPO

SCRIPT = REPO / ".ci" / "backports.sh"
# Debian 12's own deb822 file as the debian:12 image has it (and this project's CI machines)
DEB822 = """Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://deb.example/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.example/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""


def run(etc: Path, codename: str = "bookworm") -> subprocess.CompletedProcess:
    osr = etc.parent / "os-release"
    osr.write_text(f'PRETTY_NAME="Debian"\nID=debian\nVERSION_CODENAME={codename}\n')
    env = os.environ | {"APT_ETC": str(etc), "OS_RELEASE": str(osr)}
    return subprocess.run([str(SCRIPT)], env=env, capture_output=True, text=True, timeout=30)


@pytest.fixture
def etc(tmp_path) -> Path:
    (tmp_path / "apt" / "sources.list.d").mkdir(parents=True)
    return tmp_path / "apt"


def ours(etc: Path) -> Path:
    return etc / "sources.list.d" / "snia-pts-backports.sources"


def fields(path: Path) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in path.read_text().splitlines()
                if line and not line.startswith("#"))


def test_deb822_source_gives_the_backports_suite_once(etc):
    (etc / "sources.list.d" / "debian.sources").write_text(DEB822)
    first = run(etc)
    assert first.returncode == 0, first.stderr
    assert fields(ours(etc)) == {
        "Types": "deb", "URIs": "http://deb.example/debian", "Suites": "bookworm-backports",
        "Components": "main", "Signed-By": "/usr/share/keyrings/debian-archive-keyring.gpg"}
    written = ours(etc).read_bytes()
    again = run(etc)                                   # idempotent
    assert again.returncode == 0 and "unchanged" in again.stdout
    assert ours(etc).read_bytes() == written
    assert sorted(p.name for p in (etc / "sources.list.d").iterdir()) == [
        "debian.sources", "snia-pts-backports.sources"]


def test_one_line_source_with_its_keyring(etc):
    (etc / "sources.list").write_text(
        "# deb http://old.example/debian bookworm main\n"
        "deb http://security.example/debian-security bookworm-security main\n"
        "deb [arch=amd64 signed-by=/usr/share/keyrings/k.gpg] http://mirror.example/debian "
        "bookworm main contrib\n")
    done = run(etc)
    assert done.returncode == 0, done.stderr
    assert fields(ours(etc)) == {
        "Types": "deb", "URIs": "http://mirror.example/debian", "Suites": "bookworm-backports",
        "Components": "main", "Signed-By": "/usr/share/keyrings/k.gpg"}


def test_the_release_codename_decides_the_suite(etc):
    (etc / "sources.list").write_text("deb http://mirror.example/debian trixie main\n")
    assert run(etc, "trixie").returncode == 0
    assert fields(ours(etc))["Suites"] == "trixie-backports"


def test_backports_already_configured_is_left_alone(etc):
    (etc / "sources.list.d" / "debian.sources").write_text(DEB822)
    (etc / "sources.list.d" / "bp.list").write_text(
        "deb http://mirror.example/debian bookworm-backports main\n")
    done = run(etc)
    assert done.returncode == 0 and "already configured" in done.stdout
    assert not ours(etc).exists()


@pytest.mark.parametrize("content", ["", "deb http://mirror.example/debian bullseye main\n",
                                     "deb-src http://mirror.example/debian bookworm main\n"])
def test_no_debian_source_of_the_release_fails_naming_it(etc, content):
    (etc / "sources.list").write_text(content)
    done = run(etc)
    assert done.returncode == 1
    assert "no Debian source of suite bookworm" in done.stderr
    assert not ours(etc).exists()
