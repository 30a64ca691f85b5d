"""Start, stop, list and reap emulated SSDs (FUSE FTL daemon + loop device).

One instance = one state directory STATE_ROOT/<serial>/ holding
    state.json   what was created (device, mount, backing file, daemon and owner processes)
    daemon.pid   written by the daemon itself
    daemon.log   the daemon's stderr
    mnt/         the FUSE mount point (disk.img, stats)
and one sparse backing file BACKING_DIR/snia-pts-<serial>.img.

An instance belongs to an owner process (by default the one that called `start`). When the
owner is gone, the instance is stale: the daemon tears it down itself within a second, and
the next `start` reaps whatever is left (for instance after the daemon was killed too).
Teardown only touches what the state directory names: the loop device is detached only
if it is bound to this instance's image (see system.detach_loop).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import pts
from pts.emulate import system
from pts.emulate.instance import MODEL, EmulateError, Instance, identity_of  # noqa: F401
from pts.emulate.profiles import PAGE_SIZE, get_profile
from pts.tools import atomic

# What an instance is (its record in state.json, its identity, the emulator's error) is in
# instance.py; the emulator's callers reach those names through this module, as before.

STATE_ROOT = Path(os.environ.get("PTS_EMULATE_STATE_DIR", "/run/snia-pts/emulated"))
BACKING_DIR = Path(os.environ.get("PTS_EMULATE_BACKING_DIR", "/dev/shm"))
MIN_SIZE = 16 << 20
START_TIMEOUT_S = 20.0
STALE_START_S = 3 * START_TIMEOUT_S   # a start that never finished (its starter died)

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1000, "kib": 1 << 10, "m": 1 << 20, "mb": 10**6,
          "mib": 1 << 20, "g": 1 << 30, "gb": 10**9, "gib": 1 << 30, "t": 1 << 40,
          "tb": 10**12, "tib": 1 << 40}


# ------------------------------------------------------------------------- input checks

def parse_size(text: str | int) -> int:
    """'256M', '1G', '512MiB', '1.5GiB', '268435456' -> bytes (K/M/G/T are binary units)."""
    if isinstance(text, int):
        return text
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", str(text))
    unit = match.group(2).lower() if match else None
    if not match or unit not in _UNITS:
        raise EmulateError(f"cannot read size {text!r}: give a number with an optional unit, "
                           "e.g. 256M, 1G, 512MiB or 268435456 (bytes)")
    return int(float(match.group(1)) * _UNITS[unit])


def check_size(size: int) -> None:
    if size < MIN_SIZE or size % PAGE_SIZE:
        raise EmulateError(f"size {size} bytes is not usable: give at least {MIN_SIZE >> 20} MiB, "
                           f"in whole {PAGE_SIZE}-byte pages (e.g. 256M)")
    free = shutil.disk_usage(BACKING_DIR).free
    if size > free:
        raise EmulateError(f"size {size} bytes does not fit in {BACKING_DIR} ({free} bytes free): "
                           "choose a smaller size or free memory in that tmpfs")


def check_host() -> None:
    """Everything `start` needs, reported together."""
    problems = []
    if os.geteuid() != 0:
        problems.append("must run as root (loop devices and FUSE mounts need it)")
    if not os.path.exists("/dev/fuse"):
        problems.append("/dev/fuse is missing: load the fuse module (modprobe fuse)")
    for tool, package in (("losetup", "mount"), ("fusermount3", "fuse3")):
        if not shutil.which(tool):
            problems.append(f"{tool} not found: install {package} (apt-get install {package})")
    try:
        importlib.import_module("mfusepy")      # loads libfuse3: both must be there
    except (ImportError, OSError) as exc:
        problems.append(f"mfusepy unusable ({exc}): pip install 'snia-pts[emulate]' "
                        "and apt-get install fuse3")
    if problems:
        raise EmulateError("cannot start an emulated SSD: " + "; ".join(problems))


# ------------------------------------------------------------------------- state files

def locked(on_wait: Callable[[str], None] | None = None) -> contextlib.AbstractContextManager[None]:
    """Serialise reaping and registration between processes (flock on STATE_ROOT/.lock);
    on_wait is told who holds it if it is taken (see system.flocked)."""
    STATE_ROOT.mkdir(parents=True, exist_ok=True, mode=0o700)
    return system.flocked(STATE_ROOT / ".lock", on_wait)


def _write_state(inst: Instance) -> None:
    path = Path(inst.state_dir) / "state.json"
    atomic.write_json(path, asdict(inst))            # readers never see half a file


def _read_state(state_dir: Path) -> Instance | None:
    try:
        return Instance.from_dict(json.loads((state_dir / "state.json").read_text()))
    except (OSError, ValueError, TypeError):
        return None


def _paths(serial: str) -> dict:
    state_dir = STATE_ROOT / serial
    mount = state_dir / "mnt"
    return {"state_dir": str(state_dir), "mount": str(mount), "image": str(mount / "disk.img"),
            "backing": str(BACKING_DIR / f"snia-pts-{serial}.img")}


def list_instances() -> list[Instance]:
    """Every instance with a readable state file, oldest first."""
    if not STATE_ROOT.is_dir():
        return []
    found = [_read_state(d) for d in STATE_ROOT.iterdir() if d.is_dir()]
    return sorted((i for i in found if i), key=lambda i: i.created)


def find(device_or_serial: str) -> Instance | None:
    """The instance behind a /dev/loopN path (symlinks resolved) or a serial, else None.

    A stale state file may still name a loop device that now serves a newer instance;
    the instance whose image the device is really bound to wins.
    """
    wanted = os.path.realpath(device_or_serial) if "/" in device_or_serial else device_or_serial
    matches = [i for i in list_instances() if wanted in (i.serial, i.device)]
    bound = [i for i in matches if i.device and system.loop_backing_file(i.device) == i.image]
    return (bound or matches or [None])[-1]


def identity(device: str) -> dict | None:
    """Identity (model, serial, firmware) of an emulated device, None if it is not one."""
    inst = find(device)
    return inst.identity if inst and inst.device else None


def is_stale(inst: Instance) -> bool:
    """Owner gone, daemon gone, or stuck in "starting" far longer than a start may take."""
    if inst.owner_pid and not system.process_alive(inst.owner_pid, inst.owner_start):
        return True
    if inst.status == "running":
        return not system.process_alive(inst.pid, inst.pid_start)
    return time.time() - inst.created > STALE_START_S


# ------------------------------------------------------------------------- start

def start(size: int | str, profile: str = "default", owner_pid: int | None = -1) -> Instance:
    """Create an emulated SSD and return it once /dev/loopN is usable.

    owner_pid: the instance is torn down when this process is gone; -1 (default) means the
    calling process, None means nobody (it lives until `stop`).
    """
    size = parse_size(size)
    check_size(size)
    get_profile(profile)                       # raises ValueError naming the choices
    check_host()
    if owner_pid == -1:
        owner_pid = os.getpid()
    owner_start = system.process_start_time(owner_pid) if owner_pid else None
    if owner_pid and owner_start is None:
        raise EmulateError(f"owner process {owner_pid} does not exist: give a live pid or none")
    with locked():
        reap_stale(lock_held=True)
        inst = _register(size, profile, owner_pid, owner_start)
    try:
        inst = _launch(inst)
    except BaseException:
        with locked():
            teardown(Path(inst.state_dir))
        raise
    return inst


def _register(size: int, profile: str, owner_pid: int | None, owner_start: int | None):
    serial = "EMU" + secrets.token_hex(4).upper()
    paths = _paths(serial)
    Path(paths["mount"]).mkdir(parents=True, mode=0o700)
    inst = Instance(serial=serial, device=None, pid=None, pid_start=None, owner_pid=owner_pid,
                    owner_start=owner_start, profile=profile, size=size, created=time.time(),
                    status="starting", **paths)
    _write_state(inst)
    return inst


def _launch(inst: Instance) -> Instance:
    log = open(Path(inst.state_dir) / "daemon.log", "ab")   # noqa: SIM115 - handed to child
    with log:
        # The daemon forks and this first process exits at once (see daemon.py), so the
        # server is not our child: no zombie, and it outlives us if we are killed.
        first = subprocess.run([sys.executable, "-m", "pts.emulate.daemon", inst.state_dir],
                               stdin=subprocess.DEVNULL, stdout=log, stderr=log, check=False,
                               timeout=START_TIMEOUT_S, cwd="/", env=_daemon_env())
    if first.returncode != 0:
        raise EmulateError(f"the emulator daemon failed to start: {_log_tail(inst)}")
    pid = _wait_for_mount(inst)
    inst = _replace(inst, pid=pid, pid_start=system.process_start_time(pid))
    _write_state(inst)
    device = system.attach_loop(inst.image, get_profile(inst.profile).logical_block_size)
    inst = _replace(inst, device=device, status="running")
    _write_state(inst)
    return inst


def _daemon_env() -> dict:
    """Our environment, with this checkout importable even if snia-pts is not installed."""
    env = dict(os.environ)
    root = str(Path(pts.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


def _wait_for_mount(inst: Instance) -> int:
    """Wait for the daemon's pid file and for disk.img to appear; return the daemon pid."""
    deadline = time.monotonic() + START_TIMEOUT_S
    pid_file = Path(inst.state_dir) / "daemon.pid"
    pid = None
    while time.monotonic() < deadline:
        if pid is None and pid_file.exists():
            with contextlib.suppress(ValueError, OSError):
                pid = int(pid_file.read_text())
        if pid is not None:
            if system.is_mounted(inst.mount) and os.path.exists(inst.image):
                return pid
            if not system.process_alive(pid, None):
                break
        time.sleep(0.02)
    raise EmulateError(f"the emulator daemon did not come up; its log says: {_log_tail(inst)}")


def _log_tail(inst: Instance, lines: int = 8) -> str:
    try:
        text = (Path(inst.state_dir) / "daemon.log").read_text(errors="replace")
    except OSError:
        return "(no log)"
    return " | ".join(text.strip().splitlines()[-lines:]) or "(empty log)"


def _replace(inst: Instance, **changes) -> Instance:
    return Instance(**dict(asdict(inst), **changes))


# ------------------------------------------------------------------------- stop / reap

def stop(device: str) -> Instance:
    """Tear down the emulated SSD at `device` (or with that serial); refuse anything else."""
    inst = find(device)
    if inst is None:
        raise EmulateError(f"{device} is not an emulated SSD started by snia-pts, so it is left "
                           "alone; `python -m pts emulate list` shows the ones that are")
    with locked():
        teardown(Path(inst.state_dir))
    return inst


def reap_stale(lock_held: bool = False) -> list[str]:
    """Tear down every instance whose owner or daemon is gone; return their serials."""
    if not lock_held:
        with locked():
            return reap_stale(lock_held=True)
    reaped = []
    for state_dir in sorted(STATE_ROOT.iterdir()) if STATE_ROOT.is_dir() else []:
        if not state_dir.is_dir():
            continue
        inst = _read_state(state_dir)
        # A directory without a readable state file is debris of a crash during start
        # (registration happens under the lock, so it is never half-written otherwise).
        if inst is None or is_stale(inst):
            teardown(state_dir)
            reaped.append(state_dir.name)
    return reaped


def teardown(state_dir: Path, kill_daemon: bool = True,
             log: Callable[[str], None] = lambda message: None) -> None:
    """Loop device, then mount, then daemon, then files: each step tolerates being done.

    Call with the lock held (`stop`, `reap_stale`, the daemon's owner watchdog do).
    `log` is told each step (the watchdog writes them to daemon.log).
    """
    inst = _read_state(state_dir)
    paths = _paths(state_dir.name)
    for device, backing in _our_loops(inst, paths["image"]):
        log(f"detach {device} from {backing}: asked {system.detach_loop(device, backing)}")
        log(f"{device} released: {system.wait_loop_released(device, backing, timeout=5.0)}")
    unmount_error = _try_unmount(paths["mount"])
    log(f"unmount {paths['mount']}: {unmount_error or 'done'}")
    pid, pid_start = _daemon_process(state_dir, inst)
    if kill_daemon and pid:
        system.terminate(pid, pid_start)
    if unmount_error and _try_unmount(paths["mount"]):
        # Never rmtree through a live mount; the next reap will try again.
        raise EmulateError(f"cannot unmount {paths['mount']}: {unmount_error}")
    log(f"remove {paths['backing']} and {state_dir}")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(paths["backing"])
    shutil.rmtree(state_dir, ignore_errors=True)


def _our_loops(inst: Instance | None, image: str) -> list[tuple[str, str]]:
    """(loop device, its backing file as sysfs names it) of this instance. Its FUSE daemon
    dead, sysfs may name the file '<image> (deleted)' or '/disk.img (deleted)': the device
    the state recorded, bound to a file so named, is ours (after kill -9 of the daemon
    mid-run it was left bound)."""
    found = [(device, image) for device in system.loops_backed_by(image)]
    if not found and inst is not None and inst.device:
        text = system.loop_backing_file(inst.device)
        if text in (f"{image} (deleted)", f"/{Path(image).name} (deleted)"):
            found.append((inst.device, text))
    return found


def _try_unmount(mount: str) -> str | None:
    try:
        system.unmount(mount)
    except system.CommandError as exc:
        return str(exc)
    return None


def _daemon_process(state_dir: Path, inst: Instance | None) -> tuple[int | None, int | None]:
    if inst and inst.pid:
        return inst.pid, inst.pid_start
    try:
        # Crash before state.json recorded it: trust the pid file only if that process
        # is one of our daemons for this very state directory.
        pid = int((state_dir / "daemon.pid").read_text())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except (OSError, ValueError):
        return None, None
    if b"pts.emulate.daemon" in cmdline and str(state_dir).encode() in cmdline:
        return pid, system.process_start_time(pid)
    return None, None


# ------------------------------------------------------------------------- stats

def read_stats(instance: Instance | str) -> dict:
    """The model's counters, profile and identity, as the daemon reports them right now."""
    inst = instance if isinstance(instance, Instance) else find(instance)
    if inst is None:
        raise EmulateError(f"{instance} is not an emulated SSD started by snia-pts")
    with open(inst.stats_path, encoding="utf-8") as fh:
        return json.loads(fh.read())
