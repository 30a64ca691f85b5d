"""--inventory FILE (pts.session.inventory): the file checked whole on load, with errors
that name the file, the host, the drive and the key; drives as the session's --device
values with their own options; --only by label, host or group. (The session it makes, with
its dry run and a refused host: tests/e2e/test_inventory_session.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from pts.session.devices import child_args
from pts.session.inventory import InventoryError, load

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "docs" / "inventory-example.toml"
SHEET = REPO / "docs" / "inventory-example-datasheet.toml"


def test_the_documented_example_loads_as_documented():
    inv = load(EXAMPLE)
    got = {d.label: (d.host, d.given, d.groups, d.child_args()) for d in inv.drives}
    assert got == {
        "demo-a": ("controller", "emulated:64M:default", ("demo",),
                   ["--spec", "pts-2.0.2-enterprise", "--purge", "auto"]),
        "demo-b": ("controller", "emulated:128M:default", ("demo",),
                   ["--spec", "pts-2.0.2-client", "--purge", "trim",
                    "--datasheet", str(SHEET)]),
        "jbof1-slot0": ("dut1", "ssh://root@dut1.lab.example:22/dev/disk/by-id/"
                        "nvme-EXAMPLE_SSD_X1_SN0001", ("rack1", "jbof1"),
                        ["--spec", "pts-2.0.2-enterprise", "--purge", "trim", "--round-mode",
                         "stonewalled", "--fio-port", "8765", "--datasheet", str(SHEET)]),
        "jbof1-slot1": ("dut1", "ssh://root@dut1.lab.example:22/dev/nvme1n1",
                        ("rack1", "jbof1"),
                        ["--spec", "pts-2.0.2-enterprise", "--purge", "trim", "--round-mode",
                         "stonewalled", "--fio-port", "8765"]),
        "dut2:sdb": ("dut2", "ssh://pts@192.0.2.12:2222/dev/sdb", ("rack1",),
                     ["--spec", "pts-e-1.1", "--purge", "none", "--round-mode", "per-point"]),
    }
    assert [h.target for h in inv.hosts] == ["this machine", "root@dut1.lab.example:22",
                                            "pts@192.0.2.12:2222"]


def test_only_selects_by_label_host_or_group():
    inv = load(EXAMPLE)
    assert [d.label for d in inv.select("demo")] == ["demo-a", "demo-b"]
    assert [d.label for d in inv.select("jbof1")] == ["jbof1-slot0", "jbof1-slot1"]
    assert [d.label for d in inv.select("dut2, demo-b")] == ["demo-b", "dut2:sdb"]
    assert len(inv.select(None)) == 5
    with pytest.raises(InventoryError, match=r"--only jbof9: no drive label, host or group "
                                             r"of that name; known: .*jbof1"):
        inv.select("jbof1,jbof9")


def test_a_drives_own_options_come_after_the_sessions_so_they_win(tmp_path):
    drive = load(EXAMPLE).select("demo-b")[0]
    argv = child_args(["pts/", "--purge", "auto", "--inventory", "lab.toml", "--only=demo",
                       "--destructive"], drive.given, tmp_path / "log", drive.child_args())
    assert argv[:argv.index("--device")] == [
        "pts/", "--purge", "auto", "--destructive", "--spec", "pts-2.0.2-client",
        "--purge", "trim", "--datasheet", str(SHEET)]
    assert argv[argv.index("--device") + 1] == "emulated:128M:default"


HOST = '[hosts.h1]\naddress = "10.0.0.1"\n'
DRIVE = '[[hosts.h1.drives]]\npath = "/dev/nvme0n1"\n'


@pytest.mark.parametrize("text, message", [
    (HOST + DRIVE + 'ssh_prot = 22\n',
     r"host 'h1', drive 1: unknown key\(s\) ssh_prot; known: path, by_id"),
    (HOST + 'ssh_prot = 22\n' + DRIVE,
     r"host 'h1': unknown key\(s\) ssh_prot; known: address, local, user, ssh_port"),
    (HOST + 'ssh_port = 70000\n' + DRIVE, r"host 'h1': ssh_port = 70000: a TCP port is "
                                          r"1\.\.65535"),
    (HOST + 'purge = "erase"\n' + DRIVE, r"host 'h1': purge = 'erase': not one of auto, "),
    (HOST + DRIVE + 'round_mode = "fast"\n', r"drive 1: round_mode = 'fast': not one of"),
    (HOST + DRIVE + 'by_id = "nvme-X"\n', r"drive 1: give exactly one of path or by_id"),
    (HOST + '[[hosts.h1.drives]]\npath = "nvme0n1"\n',
     r"drive 1: path 'nvme0n1': a drive of a remote host is a device node under /dev/"),
    (HOST + DRIVE + 'spec = "pts-9"\n', r"host 'h1', drive 1: spec: "),
    (HOST + DRIVE + 'datasheet = "no-such.toml"\n',
     r"host 'h1', drive 1: datasheet .*no-such\.toml: no such file"),
    (HOST + DRIVE + 'groups = "rack1"\n', r"drive 1: groups = 'rack1': must be a list"),
    (HOST, r"host 'h1': no drives: add \[\[hosts\.h1\.drives\]\]"),
    ('[hosts.h1]\nlocal = true\nuser = "root"\n' + DRIVE,
     r"host 'h1': local = true with user: a local host has no ssh settings"),
    (HOST + DRIVE + DRIVE, r"host 'h1': label 'h1:nvme0n1' is also that of a drive of host "
                           r"'h1': each drive once"),
    ('[defaults]\npurge = "trim"\nfio_port = 1\n' + HOST + DRIVE,
     r"\[defaults\]: unknown key\(s\) fio_port"),
    ('[host.h1]\n', r"unknown key\(s\) host; known: defaults, hosts"),
    ('', r"no \[hosts\.NAME\] table"),
    ('[hosts.h1\n', r"not valid TOML: "),
])
def test_every_mistake_is_named_with_file_host_and_key(tmp_path, text, message):
    f = tmp_path / "lab.toml"
    f.write_text(text)
    with pytest.raises(InventoryError, match=message) as exc:
        load(f)
    assert str(exc.value).startswith(f"{f}: ")


def test_an_unreadable_file_is_named():
    with pytest.raises(InventoryError, match=r"--inventory /nonexistent/lab.toml: cannot read"):
        load("/nonexistent/lab.toml")


def test_defaults_then_host_then_drive(tmp_path):
    f = tmp_path / "lab.toml"
    f.write_text('[defaults]\npurge = "none"\nspec = "pts-e-1.1"\n'
                 '[hosts.h1]\nuser = "u"\npurge = "trim"\nssh_config = "cfg"\n'
                 '[[hosts.h1.drives]]\nby_id = "X"\nlabel = "x"\n'
                 '[[hosts.h1.drives]]\npath = "/dev/sdb"\npurge = "none"\ngroups = ["g"]\n')
    a, b = load(f).drives
    assert a.given == "ssh://u@h1/dev/disk/by-id/X" and b.given == "ssh://u@h1/dev/sdb"
    assert a.options == {"spec": "pts-e-1.1", "purge": "trim",
                         "ssh_config": str(tmp_path / "cfg")}
    assert b.options["purge"] == "none" and (a.label, b.label) == ("x", "h1:sdb")
    assert b.groups == ("g",) and a.groups == ()
