"""wipefs failing is said in the header ("signatures could not be listed: why"), not turned
into an empty WILL DESTROY list. wipefs is faked (commands.run replaced)."""

from __future__ import annotations

import pytest

from pts.config.settings import make_settings
from pts.config.spec import load_spec
from pts.device import safety
from pts.device.identity import BlockDevice, Identity
from pts.session import plugin
from pts.tools import commands

DEV = BlockDevice("/dev/loop9", "/dev/loop9", "loop9", (7, 9), 1 << 30, 512, 512, "loop",
                  False, Identity("m", "s", "f", "sysfs"))
WIPEFS_OK = ('{"signatures": [{"device": "loop9", "offset": "0x438", "type": "ext4", '
             '"uuid": "u-1", "label": "oldfs"}]}')


def fake_wipefs(monkeypatch, *, raises=None, stdout=WIPEFS_OK):
    def run(argv, **kwargs):
        assert argv[0] == "wipefs" and "-a" not in argv      # listing only
        if raises is not None:
            raise raises
        return commands.CommandResult(tuple(argv), 0, stdout, "", 0.0)
    monkeypatch.setattr(commands, "run", run)


class Config:
    def __init__(self, signatures):
        self.stash = pytest.Stash()
        self.stash[plugin.DEVICE] = DEV
        self.stash[plugin.SETTINGS] = make_settings(
            load_spec(), device=DEV.path, destructive=True, point_seconds=None,
            max_rounds=None, purge="auto", reports_dir="reports")
        self.stash[plugin.SIGNATURES] = signatures


def destroy_lines(signatures) -> list[str]:
    return [line for line in plugin.pytest_report_header(Config(signatures))
            if "WILL DESTROY" in line]


def test_found_signatures_are_listed(monkeypatch):
    fake_wipefs(monkeypatch)
    assert destroy_lines(safety.signatures(DEV)) == [
        "snia-pts WILL DESTROY: ext4 at offset 0x438 (label oldfs) (uuid u-1) on /dev/loop9"]


@pytest.mark.parametrize("raises, stdout, why", [
    (commands.ToolFailed("wipefs exited with status 1: wipefs --json /dev/loop9: "
                         "Permission denied"), "",
     "wipefs exited with status 1: wipefs --json /dev/loop9: Permission denied"),
    (commands.ToolMissing("wipefs not found: apt-get install util-linux"), "",
     "wipefs not found: apt-get install util-linux"),
    (None, "{not json", "wipefs --json printed no JSON"),
])
def test_failure_is_said_not_hidden(monkeypatch, raises, stdout, why):
    fake_wipefs(monkeypatch, raises=raises, stdout=stdout)
    lines = destroy_lines(safety.signatures(DEV))
    assert len(lines) == 1, lines
    assert lines[0].startswith(
        "snia-pts WILL DESTROY: everything on /dev/loop9; its file system and partition "
        "table signatures could not be listed (")
    assert why in lines[0]
