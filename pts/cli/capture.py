"""`python -m pts capture DEVICE --seconds N -o CAPTURE`: record a drive's block I/O in use.

Read-only: the device is never opened for writing (it is named in a tracepoint filter), so a mounted
device serving its real workload is allowed and no --destructive is needed. While tracing,
the ring buffer's pages are only spooled (CAPTURE.spool, in fsync'd parts); the spool is
decoded into CAPTURE afterwards. Exit 0 written (also when SIGINT/SIGTERM ended the tracing
early: what was traced is kept, and the notes say so), 1 writing the spool failed (e.g. a
full disk: what was spooled is kept), 2 bad input (nothing written),
130/143 interrupted while decoding (the spool kept, readable by `pts workload`).

This module parses the arguments and prints; the capture is assembled in
pts/workload/capture/record.py.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from pts.config import spec
from pts.device import identity
from pts.tools import hosts
from pts.workload.capture import record, tracefs, unspool
from pts.workload.capture import spool as spooling
from pts.workload.capture.events import CaptureError, CaptureInfo, Op, open_capture
from pts.workload.capture.pairing import KWORKER

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


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
    p.add_argument("--buffer-kb", type=int, default=record.BUFFER_KB,
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


def run(args: argparse.Namespace) -> int:
    try:
        out = record.record(asked(args), say)
    except (record.BadInput, identity.DeviceError, tracefs.TracefsError, hosts.RemoteError,
            CaptureError, spec.SpecError) as exc:
        print(f"python -m pts capture: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except record.SpoolFailed as exc:
        print(f"python -m pts capture: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except record.Decoding as exc:
        print(f"python -m pts capture: {exc} while decoding the spool: the capture is kept "
              f"in {exc.where} (read it with `python -m pts workload {exc.where}`)",
              file=sys.stderr)
        return 128 + exc.signum
    print(summary(open_capture(out).info, out))
    return EXIT_OK


def asked(args: argparse.Namespace) -> record.Asked:
    """The options as the assembly takes them (record.Asked: the same names)."""
    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(record.Asked)}
    return record.Asked(**given | {"process": tuple(given["process"])})


def say(text: str) -> None:
    """What the capture tells on the way (stdout, before its summary)."""
    print(f"python -m pts capture: {text}", flush=True)


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
