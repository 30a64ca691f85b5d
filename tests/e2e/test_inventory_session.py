"""A session from --inventory (issue 24 §1), dry runs on emulated SSDs: the documented
example's demo drives each planned with their own options; a host that cannot be reached
refuses the session with its reason before anything is written (or is left out with
--skip-refused-devices); one selected drive is a single-device run with its options."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.ptsrun import run_suite

pytestmark = pytest.mark.needs("root", "fusermount3", "losetup", "ssh")

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = str(REPO / "docs" / "inventory-example.toml")
PLAN_A = "[demo-a] purge: discard (emulated SSD: resets the FTL model) [emulated SSD]"
PLAN_B = "[demo-b] purge: trim (declared deviation) [--purge trim]"
SHEET_ITEM = "test_requirement[iops RND 4KiB 0/100 iops >= 100]"
HMS = r"(\d+):(\d\d):(\d\d)"


def seconds(hms) -> int:
    return int(hms[0]) * 3600 + int(hms[1]) * 60 + int(hms[2])


def dry(*args: str, reports: Path):
    return run_suite("--destructive", "--dry-run", "--reports-dir", str(reports), *args)


def test_the_documented_example_plans_each_demo_drive_with_its_own_options(tmp_path):
    p = dry("--inventory", EXAMPLE, "--only", "demo", reports=tmp_path / "r")
    out = p.stdout
    assert p.returncode == 0, out + p.stderr
    assert f"snia-pts inventory {EXAMPLE}: 2 drive(s) selected by --only demo" in out
    assert "snia-pts host controller:" in out and "snia-pts host dut1" not in out
    assert "snia-pts   [demo-b] emulated:128M:default (groups demo): --spec " \
           "pts-2.0.2-client, --purge trim, --datasheet " in out
    # each child planned with its own purge; only demo-b has the datasheet's requirement
    # one per PTS test item: demo-b's own spec (pts-2.0.2-client) has one Throughput size
    assert (out.count(PLAN_A), out.count(PLAN_B)) == (9, 8)
    assert "[demo-b] snia-pts settings: spec pts-2.0.2-client," in out
    assert "[demo-a] purge: trim" not in out and "[demo-b] purge: discard" not in out
    assert f"[demo-b] --- pts/suite/test_datasheet.py::{SHEET_ITEM}" in out
    assert "[demo-a] --- pts/suite/test_datasheet.py" not in out
    assert "snia-pts [demo-a] emulated:64M:default: exit status 0" in out
    assert not (tmp_path / "r").exists()
    # the session's estimate: its drives in parallel, so the longest drive's
    runs = {label: re.search(rf"\[{label}\] estimated duration of this run: best {HMS}, "
                             rf"worst {HMS} ", out) for label in ("demo-a", "demo-b")}
    best = max(runs, key=lambda k: seconds(runs[k].groups()[0:3]))
    worst = max(runs, key=lambda k: seconds(runs[k].groups()[3:6]))
    assert (f"snia-pts estimated duration of the session (2 drives in parallel; purges not "
            f"included): best {':'.join(runs[best].groups()[0:3])} (the longest: [{best}]), "
            f"worst {':'.join(runs[worst].groups()[3:6])} ([{worst}])") in out


LAB = """
[hosts.here]
local = true
[[hosts.here.drives]]
path = "emulated:64M:default"
label = "a"
purge = "trim"

[hosts.gone]                       # nothing listens on port 1: ssh is refused at once
address = "127.0.0.1"
ssh_port = 1
purge = "trim"
round_mode = "stonewalled"
[[hosts.gone.drives]]
path = "/dev/nvme0n1"
"""


def test_a_host_that_cannot_be_reached_is_refused_with_its_reason(tmp_path):
    lab = tmp_path / "lab.toml"
    lab.write_text(LAB)
    p = dry("--inventory", str(lab), reports=tmp_path / "r")
    assert p.returncode == 4, p.stdout + p.stderr
    assert "refusing the whole session: [gone:nvme0n1] ssh://127.0.0.1:1/dev/nvme0n1: cannot " \
           "run commands on 127.0.0.1 over ssh" in p.stderr
    assert "Connection refused" in p.stderr and "[a]" not in p.stderr
    p = dry("--inventory", str(lab), "--skip-refused-devices", reports=tmp_path / "r")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "snia-pts [gone:nvme0n1] ssh://127.0.0.1:1/dev/nvme0n1: REFUSED, not run: " in \
        p.stdout
    assert p.stdout.count("[a] purge: trim (declared deviation)") == 9
    assert not (tmp_path / "r").exists()


def test_one_selected_drive_is_a_single_device_run_with_its_options(tmp_path):
    p = dry("--inventory", EXAMPLE, "--only", "demo-b", reports=tmp_path / "r")
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.count("purge: trim (declared deviation) [--purge trim]") == 8
    assert f"--- pts/suite/test_datasheet.py::{SHEET_ITEM}" in p.stdout
    assert "[demo-b]" not in p.stdout                   # no child: the run itself


def test_inventory_usage_errors(tmp_path):
    p = dry("--inventory", EXAMPLE, "--device", "/dev/null", reports=tmp_path / "r")
    assert p.returncode == 4 and "--inventory and --device: give the drives in one place" \
        in p.stderr
    p = dry("--device", "/dev/null", "--only", "demo", reports=tmp_path / "r")
    assert p.returncode == 4 and "--only selects drives of an --inventory FILE" in p.stderr
    p = dry("--inventory", EXAMPLE, "--only", "nothing", reports=tmp_path / "r")
    assert p.returncode == 4 and "--only nothing: no drive label, host or group" in p.stderr


def test_options_are_checked_per_drive_with_its_own_spec(tmp_path):
    """A reduced IOPS matrix valid for the inventory's spec (PTS-E 1.1: RND 4 KiB 0/100 is its
    tracking variable) and not for the command line's default (PTS 2.0.2) is accepted; a
    drive whose own spec it does not fit is refused, named."""
    lab = tmp_path / "lab.toml"
    lab.write_text('[defaults]\nspec = "pts-e-1.1"\n\n[hosts.here]\nlocal = true\n\n'
                   '[[hosts.here.drives]]\npath = "emulated:32M:fast"\nlabel = "a"\n\n'
                   '[[hosts.here.drives]]\npath = "emulated:48M:fast"\nlabel = "b"\n')
    reduced = ("--iops-block-sizes", "4KiB", "--iops-rw-mixes", "0/100")
    p = dry("--inventory", str(lab), *reduced, reports=tmp_path / "r")
    assert p.returncode == 0, p.stdout + p.stderr
    lab.write_text(lab.read_text() + 'spec = "pts-2.0.2-enterprise"\n')    # b's own spec
    p = dry("--inventory", str(lab), *reduced, reports=tmp_path / "r")
    assert p.returncode == 4, p.stdout + p.stderr
    assert "[b] --iops-block-sizes/--iops-rw-mixes: the reduced matrix must keep the " \
           "tracking variable RND 64KiB 65/35" in p.stderr
