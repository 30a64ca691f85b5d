"""External commands: logged before they run, and never outliving the suite."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

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


def test_timeout_stops_the_child(tmp_path):
    """The tool outlives its timeout: run() says so and the tool is gone when it returns
    (judged by the tool's own process, found by its path, not by how long the stop took on
    a loaded host). Popen returns once the tool's exec is done, so it exists to be found."""
    tool = tmp_path / "sleep"
    shutil.copy("/bin/sleep", tool)
    try:
        with pytest.raises(commands.ToolFailed, match="did not finish within 1 s"):
            commands.run([str(tool), "600"], timeout=1)
        left = processes_of(tool)
        assert not left, f"the tool outlived its timeout: {left}"
    finally:
        for pid in processes_of(tool):
            os.kill(pid, signal.SIGKILL)


def processes_of(program: Path) -> list[int]:
    """The live processes (not zombies) running `program`."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            argv0 = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            continue
        if argv0 == str(program).encode() and running(int(entry)):
            found.append(int(entry))
    return found


def wait_for(condition, what: str, limit: float = 60) -> None:
    """Until condition() holds; the limit only stops a test that would hang (starting
    Python on a loaded machine can take many seconds)."""
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, f"not within {limit} s: {what}"
        time.sleep(0.02)


def running(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_child_dies_with_the_suite(tmp_path):
    """kill -9 of the process running a tool: the tool goes too (PR_SET_PDEATHSIG)."""
    marker = tmp_path / "child.pid"
    code = ("import sys; from pts.tools import commands; "
            f"commands.run(['sh', '-c', 'echo $$ > {marker}; exec sleep 600'])")
    parent = subprocess.Popen([sys.executable, "-c", code])
    child = None
    try:
        wait_for(lambda: parent.poll() is not None or marker.exists()
                 and marker.read_text().endswith("\n"), "the tool started")
        assert parent.poll() is None, "the process running the tool ended by itself"
        child = int(marker.read_text())
        assert running(child)
        parent.kill()
        parent.wait()
        wait_for(lambda: not running(child), f"child {child} gone after its parent was killed",
                 limit=30)                   # (it would sleep 600 s)
    finally:
        parent.kill()
        parent.wait()
        if child is not None and running(child):
            os.kill(child, signal.SIGKILL)


def test_processes_the_tool_left_behind_do_not_hold_the_suite(tmp_path):
    """fio killed while its job processes live: they hold its output pipes open. run()
    returns the tool's own result and stops them (it used to wait for them forever)."""
    marker = tmp_path / "orphan.pid"
    script = (f"import os, sys, time\n"
              f"if os.fork() == 0:\n"
              f"    open({str(marker)!r}, 'w').write(str(os.getpid()) + '\\n')\n"
              f"    time.sleep(600)\n"
              f"    os._exit(0)\n"
              f"while not os.path.exists({str(marker)!r}):\n"
              f"    time.sleep(0.01)\n"
              f"print('main done', flush=True)\n"
              f"os._exit(0)\n")
    orphan = None
    try:
        result = commands.run([sys.executable, "-c", script], timeout=60)
        assert result.returncode == 0 and result.stdout == "main done\n"
        orphan = int(marker.read_text())
        wait_for(lambda: not running(orphan), f"left-behind process {orphan} stopped",
                 limit=30)
    finally:
        if orphan is None and marker.exists() and marker.read_text().endswith("\n"):
            orphan = int(marker.read_text())
        if orphan is not None and running(orphan):
            os.kill(orphan, signal.SIGKILL)
