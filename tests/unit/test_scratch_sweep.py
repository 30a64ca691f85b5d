"""The test sessions' scratch files in /dev/shm (loop devices' backing files, the QEMU
guest's disks) are named after their test process; a new session removes those of dead
processes, detaching the loop devices bound to them, and never a live one's."""

import subprocess
import sys
from pathlib import Path

import pytest

from pts.tools import liveness
from tests.support.helpers import SCRATCH_NAME, scratch_file, sweep_scratch

pytestmark = [pytest.mark.needs("root", "losetup")]


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_dead_sessions_files_and_loop_devices_go_a_live_ones_stay(tmp_path):
    mine = scratch_file("pts-test", 1 << 20, tmp_path)
    gone = dead_pid()
    dead = tmp_path / f"pts-guest-nvme-{liveness.namespace_mark()}-{gone}-0123abcd.img"
    dead.write_bytes(b"\0" * (1 << 20))
    other = tmp_path / "pts-test-notapid.img"            # not our name: never touched
    other.touch()
    # another pid namespace's (a test session in a container): its pids are not ours
    container = tmp_path / f"pts-test-1-{gone}-0123abcd.img"
    container.touch()
    dev = subprocess.run(["losetup", "--find", "--show", str(dead)], check=True,
                         capture_output=True, text=True).stdout.strip()
    bound = Path("/sys/block") / Path(dev).name / "loop" / "backing_file"
    try:
        assert SCRATCH_NAME.match(mine.name) and SCRATCH_NAME.match(dead.name)
        assert sweep_scratch(tmp_path) == [dead]
        assert not dead.exists() and mine.exists() and other.exists() and container.exists()
        assert not bound.exists() or not bound.read_text().startswith(str(dead))  # detached
        assert sweep_scratch(tmp_path) == []
    finally:
        if bound.exists() and bound.read_text().strip().startswith(str(dead)):
            subprocess.run(["losetup", "-d", dev], check=False)
