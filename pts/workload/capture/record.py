"""`python -m pts capture` assembled (pts/cli/capture.py parses its arguments and prints):
the live source opened for DEVICE (here, or on an ssh:// DUT host), its ring buffer spooled
while tracing (loop.spool), the spool decoded into the capture file afterwards
(unspool.to_capture) and removed; or a capture made elsewhere converted (--import).

Read-only: the device is never opened for writing (it is named in a tracepoint filter).
A failure is one of the exceptions below, each naming its fix: BadInput (nothing written),
SpoolFailed (writing the spool failed while tracing: what was spooled is kept), Decoding
(a signal while decoding: the spool is kept, readable by `python -m pts workload`).
"""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pts import __version__
from pts.config import spec
from pts.device import identity, safety
from pts.device.identity import BlockDevice
from pts.tools import commands, hosts
from pts.workload.capture import imports, tracefs, unspool
from pts.workload.capture import spool as spooling
from pts.workload.capture.events import CaptureInfo
from pts.workload.capture.local import MOUNT_POINT, kernel_dev_t, mounted_tracefs
from pts.workload.capture.loop import signals_flag, spool
from pts.workload.capture.remote import RemoteInstance
from pts.workload.capture.source import Source

# choice (rwsw-digest §7): the ring buffer per CPU. Streaming kept every event of ~115 k
# I/Os in 3 s with 1 MiB/CPU; 8 MiB (~120 k events of 68 bytes) holds several of the
# capture's 0.1 s polls at 300 k events/s on one CPU, for a slow or busy reader.
BUFFER_KB = unspool.BUFFER_KB


@dataclass(frozen=True)
class Asked:
    """What `python -m pts capture` was asked: its options as given (the CLI's names)."""
    output: Path
    device: str | None = None
    seconds: float | None = None
    step: float | None = None
    process: tuple[str, ...] = ()           # --process as given: each may comma-separate
    writeback_attribution: bool = True
    buffer_kb: int = BUFFER_KB
    ssh_config: str | None = None
    part_seconds: float = spooling.PART_S
    keep_spool: bool = False
    decode_priority: str = "normal"         # "normal" or "idle"
    import_file: Path | None = None


class BadInput(Exception):
    pass


def record(args: Asked, say: Callable[[str], None]) -> Path:
    """The capture file asked for, written: captured from DEVICE, or converted from
    --import FILE; its path. `say`: what the capture tells on the way (a mount it made)."""
    out = check_output(args.output)
    if args.import_file is not None:
        if args.device:
            raise BadInput("give either DEVICE or --import FILE, not both")
        imports.import_file(args.import_file, out)
    else:
        capture(args, out, say)
    return out


def check_output(path: Path) -> Path:
    if not path.parent.is_dir():
        raise BadInput(f"-o {path}: directory {path.parent} does not exist; create it first")
    if path.is_dir():
        raise BadInput(f"-o {path} is a directory; give a file name, e.g. {path}/cap.parquet")
    return path


def capture(args: Asked, out: Path, say: Callable[[str], None]) -> CaptureInfo:
    """Spool the ring buffer while tracing, then decode the spool into `out` (at SCHED_IDLE
    with --decode-priority idle) and remove the spool (unless --keep-spool)."""
    if not args.device:
        raise BadInput("give the DEVICE to capture (or --import FILE)")
    if args.seconds is None or args.seconds <= 0:
        raise BadInput("--seconds N (> 0) is required: how long to record")
    if args.buffer_kb < 64:
        raise BadInput(f"--buffer-kb {args.buffer_kb}: give at least 64 (KiB per CPU)")
    if args.part_seconds <= 0:
        raise BadInput(f"--part-seconds {args.part_seconds}: give a part length > 0 seconds")
    step = args.step if args.step is not None else \
        float(spec.load_rwsw()["rwsw_capture"]["step_seconds"])
    if step <= 0:
        raise BadInput(f"--step {step}: give a step length > 0 seconds")
    patterns = tuple(p.strip() for arg in args.process for p in arg.split(",") if p.strip())
    where = spooling.spool_of(out)
    if where.exists():
        raise BadInput(f"{where} exists (the spool of an earlier capture to {out.name}: read "
                       f"it with `python -m pts workload {where}`, or remove it)")
    dev, tracing = open_source(args, say)
    meta = {"source": "tracefs",
            "device": dev.remote.url(dev.path) if dev.remote else dev.path,
            "host": dev.remote.host if dev.remote else socket.gethostname(),
            "dev_t": f"{dev.devno[0]}:{dev.devno[1]}", "model": dev.identity.model,
            # their block device inodes: the metadata of the file systems on them
            "partitions": [f"{ma}:{mi}" for _, (ma, mi) in safety.partitions(dev)],
            "logical_sector": dev.logical_sector, "capacity_bytes": dev.capacity_bytes,
            "process_filter": ",".join(patterns) or None,
            "tool": f"snia-pts {__version__} (tracefs block_rq_issue/block_rq_complete"
                    + (", writeback attribution" if args.writeback_attribution else "")
                    + ")",
            "buffer_kb": args.buffer_kb, "trace_clock": tracefs.CLOCK,
            "writeback_attribution": args.writeback_attribution}
    with signals_flag() as stop, tracing as inst:
        meta["kernel"] = inst.kernel          # the traced host's: an ssh:// DUT's, not ours
        try:
            spool(inst, where, inst.formats(), meta, args.seconds, step, stop,
                  part_s=args.part_seconds)
        except OSError as exc:
            if not where.exists():
                raise
            raise SpoolFailed(f"writing the spool {where} failed ({exc.strerror}; a full "
                              "disk? free space or give -o on another file system): what "
                              "was spooled until then is kept there, read it with "
                              f"`python -m pts workload {where}`") from None
    with tracefs.signals_raise():
        try:
            info = unspool.to_capture(spooling.open_spool(where), out,
                                      idle=args.decode_priority == "idle")
        except tracefs.Interrupted as exc:
            raise Decoding(exc.signum, where) from None
    if not args.keep_spool:
        shutil.rmtree(where)
    return info


class SpoolFailed(Exception):
    """Writing the spool failed while tracing (exit 1); what was spooled is kept."""


class Decoding(tracefs.Interrupted):
    """Stopped while decoding: the spool is kept, readable later."""

    def __init__(self, signum: int, where: Path):
        super().__init__(signum)
        self.where = where


def open_source(args: Asked, say: Callable[[str], None]) -> tuple[BlockDevice, Source]:
    """The device resolved, and the live source to enter: a tracefs instance here (root,
    tracefs) or on the DUT host of an ssh:// device (its agent checks root and tracefs
    there)."""
    if hosts.is_remote(args.device):
        remote, path = hosts.parse(args.device, args.ssh_config)
        try:
            dev = identity.resolve(args.device, remote, path)
        except commands.ToolError as exc:
            raise BadInput(f"{args.device}: cannot read the device on {remote.target} over "
                           f"ssh ({(str(exc).splitlines() or [''])[0]}); check that ssh to "
                           "it works without a password prompt") from None
        return dev, RemoteInstance(remote, kernel_dev_t(*dev.devno), args.buffer_kb,
                                   writeback=args.writeback_attribution)
    dev = identity.resolve(args.device)
    if os.geteuid() != 0:
        raise BadInput("capturing needs root (tracefs instances): run it as root or with sudo")
    root = tracefs_root(say)
    tracefs.clean_leftovers(root)
    return dev, tracefs.Instance(root, kernel_dev_t(*dev.devno), args.buffer_kb,
                                 writeback=args.writeback_attribution)


def tracefs_root(say: Callable[[str], None]) -> Path:
    """The tracefs mount point. When none is mounted, it is mounted at
    local.MOUNT_POINT as the RWSW demo does (a kernel pseudo-filesystem: no device
    changes; left mounted), and `say` says so with the command."""
    try:
        return tracefs.find_tracefs()
    except tracefs.TracefsError:
        root = mounted_tracefs()
        say(f"tracefs was not mounted: mounted it at {root} "
            f"(mount -t tracefs nodev {MOUNT_POINT}); left mounted")
        return root
