"""`python -m pts capture DEVICE --seconds N -o CAPTURE`: record a drive's block I/O in use.

Read-only: the device is never opened for writing (it is named in a tracepoint filter), so a mounted
device serving its real workload is allowed and no --destructive is needed. While tracing,
the ring buffer's pages are only spooled (CAPTURE.spool, in fsync'd parts); the spool is
decoded into CAPTURE afterwards. Exit 0 written (also when SIGINT/SIGTERM ended the tracing
early: what was traced is kept, and the notes say so), 1 writing the spool failed (e.g. a
full disk: what was spooled is kept), 2 bad input (nothing written),
130/143 interrupted while decoding (the spool kept, readable by `pts workload`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import sys
from pathlib import Path

from pts import __version__
from pts.config import spec
from pts.device import identity, safety
from pts.tools import commands, hosts
from pts.workload.capture import imports, tracefs, unspool
from pts.workload.capture import spool as spooling
from pts.workload.capture.events import CaptureError, CaptureInfo, Op, open_capture
from pts.workload.capture.loop import spool
from pts.workload.capture.pairing import KWORKER
from pts.workload.capture.remote import RemoteInstance

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
# choice (rwsw-digest §7): the ring buffer per CPU. Streaming kept every event of ~115 k
# I/Os in 3 s with 1 MiB/CPU; 8 MiB (~120 k events of 68 bytes) holds several of the
# capture's 0.1 s polls at 300 k events/s on one CPU, for a slow or busy reader.
BUFFER_KB = unspool.BUFFER_KB


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Record the block I/O of DEVICE while it serves its real workload, from the kernel's "
        "block tracepoints (block_rq_issue/complete) in a tracefs instance of its own: per "
        "I/O its times, direction, sector, size, error and issuing task, and for buffered "
        "writeback the task that dirtied its pages (writeback and bio events joined); never "
        "any data. "
        "READ-ONLY: the device is never opened for writing (it is only named in the trace "
        "filter; its identity comes from sysfs, NVMe identify), so "
        "no --destructive is needed and a mounted device in use is allowed. Needs root; "
        "tracefs is mounted at /sys/kernel/tracing when it is not (said on stdout). While "
        "tracing only the kernel's ring buffer pages are spooled (CAPTURE.spool, in parts), "
        "decoded into CAPTURE afterwards: a capture killed keeps its spool, read by "
        "`python -m pts workload CAPTURE.spool`; SIGINT/SIGTERM end it early, keeping it. Or "
        "convert a capture made elsewhere: --import FILE (blkparse "
        "text output, fio iolog v2/v3). See docs/capture.md.")
    p.add_argument("device", nargs="?", help="the whole block device, e.g. /dev/nvme0n1, or "
                   "one on another host: ssh://root@HOST/dev/NAME (the host needs python3)")
    p.add_argument("--seconds", type=float, help="how long to record")
    p.add_argument("-o", "--output", required=True, type=Path,
                   help="the capture file to write (Parquet; put it on another device than "
                   "DEVICE, or its own writes are captured)")
    p.add_argument("--step", type=float, default=None,
                   help="step length in seconds for lost-event counts and the statistics "
                   "(default: [rwsw_capture] step_seconds of the RWSW spec, a reading)")
    p.add_argument("--process", action="append", default=[], metavar="NAME",
                   help="keep only I/O issued by tasks named NAME, or buffered writeback "
                   "whose pages a task named NAME dirtied (a glob; repeat or "
                   "comma-separate for several, e.g. --process 'postgres,kworker/*')")
    p.add_argument("--no-writeback-attribution", dest="writeback_attribution",
                   action="store_false",
                   help="do not trace the events that attribute buffered writeback to the "
                   "task that dirtied its pages (block_bio_queue, writeback_*, task_*): "
                   "for a host whose workload is CPU-bound O_DIRECT I/O, where the "
                   "kernel's recording of every bio costs a few %% of its IOPS (see "
                   "docs/capture.md); kworker writeback then keeps no dirtier")
    p.add_argument("--buffer-kb", type=int, default=BUFFER_KB,
                   help="tracing ring buffer per CPU in KiB (default %(default)s)")
    p.add_argument("--ssh-config", metavar="FILE", default=None,
                   help="ssh:// devices: an OpenSSH client configuration (ssh -F FILE)")
    p.add_argument("--part-seconds", type=float, default=spooling.PART_S, metavar="S",
                   help="while tracing, the ring buffer's pages are spooled to CAPTURE.spool "
                   "in parts of S seconds, each fsync'd when closed: a capture killed or "
                   "whose host loses power keeps its closed parts, readable by `python -m "
                   "pts workload CAPTURE.spool` (default %(default)g)")
    p.add_argument("--keep-spool", action="store_true",
                   help="keep CAPTURE.spool after decoding it into CAPTURE")
    p.add_argument("--decode-priority", choices=("normal", "idle"), default="normal",
                   help="the spool is decoded into CAPTURE after tracing, at this process's "
                   "priority (normal), or at SCHED_IDLE (idle: only CPU time nothing else "
                   "wants, for a server whose workload goes on; on a busy host it may wait "
                   "long). Default %(default)s")
    p.add_argument("--import", dest="import_file", type=Path, metavar="FILE",
                   help="convert blkparse text output or a fio iolog (v2/v3) instead")


class BadInput(Exception):
    pass


def run(args: argparse.Namespace) -> int:
    try:
        out = check_output(args.output)
        if args.import_file is not None:
            if args.device:
                raise BadInput("give either DEVICE or --import FILE, not both")
            imports.import_file(args.import_file, out)
        else:
            capture(args, out)
    except (BadInput, identity.DeviceError, tracefs.TracefsError, hosts.RemoteError,
            CaptureError, spec.SpecError) as exc:
        print(f"python -m pts capture: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except SpoolFailed as exc:
        print(f"python -m pts capture: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except Decoding as exc:
        print(f"python -m pts capture: {exc} while decoding the spool: the capture is kept "
              f"in {exc.where} (read it with `python -m pts workload {exc.where}`)",
              file=sys.stderr)
        return 128 + exc.signum
    print(summary(open_capture(out).info, out))
    return EXIT_OK


def check_output(path: Path) -> Path:
    if not path.parent.is_dir():
        raise BadInput(f"-o {path}: directory {path.parent} does not exist; create it first")
    if path.is_dir():
        raise BadInput(f"-o {path} is a directory; give a file name, e.g. {path}/cap.parquet")
    return path


def capture(args: argparse.Namespace, out: Path) -> CaptureInfo:
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
    dev, tracing = device_and_instance(args)
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
    with tracefs.signals_flag() as stop, tracing as inst:
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


def device_and_instance(args: argparse.Namespace):
    """The device resolved, and the tracing instance to enter: here (root, tracefs) or on
    the DUT host of an ssh:// device (its agent checks root and tracefs there)."""
    if hosts.is_remote(args.device):
        remote, path = hosts.parse(args.device, args.ssh_config)
        try:
            dev = identity.resolve(args.device, remote, path)
        except commands.ToolError as exc:
            raise BadInput(f"{args.device}: cannot read the device on {remote.target} over "
                           f"ssh ({(str(exc).splitlines() or [''])[0]}); check that ssh to "
                           "it works without a password prompt") from None
        return dev, RemoteInstance(remote, tracefs.kernel_dev_t(*dev.devno), args.buffer_kb,
                                   writeback=args.writeback_attribution)
    dev = identity.resolve(args.device)
    if os.geteuid() != 0:
        raise BadInput("capturing needs root (tracefs instances): run it as root or with sudo")
    root = tracefs_root()
    tracefs.clean_leftovers(root)
    return dev, tracefs.Instance(root, tracefs.kernel_dev_t(*dev.devno), args.buffer_kb,
                                 writeback=args.writeback_attribution)


def tracefs_root() -> Path:
    """The tracefs mount point. When none is mounted, it is mounted at
    tracefs.MOUNT_POINT as the RWSW demo does (a kernel pseudo-filesystem: no device
    changes; left mounted), and stdout says so with the command."""
    try:
        return tracefs.find_tracefs()
    except tracefs.TracefsError:
        root = tracefs.mounted_tracefs()
        print(f"python -m pts capture: tracefs was not mounted: mounted it at {root} "
              f"(mount -t tracefs nodev {tracefs.MOUNT_POINT}); left mounted", flush=True)
        return root


def summary(info: CaptureInfo, out: Path) -> str:
    ex = info.extra
    by_op = ex.get("ios_by_op") or {}
    ops = ", ".join(f"{o.name.lower()} {by_op.get(o.name, 0)}" for o in Op) if by_op \
        else "per direction: see the file"
    lost = "unknown (the source cannot tell)" if info.lost_events is None \
        else f"{info.lost_events}" + ("" if not info.lost_events else " (results incomplete)")
    seen = ex.get("requests_seen")
    kw = ex.get("kworker_requests")
    kworker = (f"{kw} of {seen} requests ({100 * kw / seen:.1f} %) issued by {KWORKER}*"
               if seen else "n/a")
    lines = [f"capture of {info.device} ({info.source}): {info.events} events "
             f"(I/O requests) in {info.seconds:g} s",
             f"  I/Os: {ops}",
             f"  lost events: {lost}",
             f"  kworker share: {kworker}"]
    wb = unspool.writeback_line(ex.get("writeback"))
    if wb:
        lines.append(f"  writeback: {wb}")
    if info.process_filter:
        lines.append(f"  process filter: {info.process_filter}")
    lines += [f"  note: {n}" for n in info.notes]
    lines.append(f"  written: {out}")
    return "\n".join(lines)
