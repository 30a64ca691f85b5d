"""External commands: logged before they run, and never outliving the suite."""

import json
import subprocess
import sys
import time

import pytest

from pts.tools import commands


def test_command_is_logged_before_it_runs(tmp_path):
    log = tmp_path / "commands.log"
    with pytest.raises(commands.ToolFailed, match="exited with status 3"):
        commands.run(["sh", "-c", "exit 3"], log_file=log)
    assert json.loads(log.read_text())["argv"] == ["sh", "-c", "exit 3"]


def test_missing_tool(tmp_path):
    with pytest.raises(commands.ToolMissing, match="apt-get install nosuch-pkg"):
        commands.require("nosuch-tool-xyz", "nosuch-pkg")
    with pytest.raises(commands.ToolMissing):
        commands.run(["nosuch-tool-xyz"])


def test_timeout_stops_the_child():
    start = time.monotonic()
    with pytest.raises(commands.ToolFailed, match="did not finish within 1 s"):
        commands.run(["sleep", "30"], timeout=1)
    assert time.monotonic() - start < 10


def test_child_dies_with_the_suite(tmp_path):
    """kill -9 of the process running a tool: the tool goes too (PR_SET_PDEATHSIG)."""
    marker = tmp_path / "child.pid"
    code = ("import sys; from pts.tools import commands; "
            f"commands.run(['sh', '-c', 'echo $$ > {marker}; exec sleep 60'])")
    parent = subprocess.Popen([sys.executable, "-c", code])
    for _ in range(100):
        if marker.exists() and marker.read_text().strip():
            break
        time.sleep(0.05)
    child = int(marker.read_text())
    parent.kill()
    parent.wait()
    for _ in range(100):
        try:
            with open(f"/proc/{child}/stat") as fh:
                if fh.read().split()[2] == "Z":
                    break
        except FileNotFoundError:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"child {child} still running after its parent was killed")
