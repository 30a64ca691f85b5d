"""`python -m pts capture --import FILE`: captures made elsewhere, into the capture file.

- blkparse text output, its default format (`%D %2c %8s %5T.%9t %5p %2a %3d ` then
  `sector + nr [comm]`, or `[error]` for C): D (issued to the device) is the row's issue and
  its task, C (completed) its completion and error, as block_rq_issue/complete in a tracefs
  capture. Q (queued) is used as the issue only in a trace that holds no D events (e.g.
  `blktrace -a queue`); other actions (G, I, M, P, U, A, X, m ...) are skipped, as is
  blkparse's closing summary. Times are seconds.nanoseconds since the trace's start (kept).
- fio iologs (HOWTO "Trace file format"): v2 (`filename action [offset length]`, optional
  `wait` in µs) and v3 (a leading timestamp: µs since the run's start, checked on fio 3.33:
  a 2 s run's last entry is at 2000122). An iolog gives what fio issued, with no completion
  times and no task; `sync`/`datasync` become flushes, `trim` a discard.
Bad input raises CaptureError naming the file and line; the capture file is written only
when the whole input parsed (CaptureWriter's temporary name).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np

from pts.workload.capture.events import NO_TIME, CaptureError, CaptureInfo, CaptureWriter, Op
from pts.workload.capture.pairing import Pairing, events

BLKPARSE = re.compile(r"^\s*(\d+),(\d+)\s+\d+\s+\d+\s+(\d+)\.(\d{9})\s+(\d+)\s+(\S+)\s+"
                      r"(\S+)\s*(.*)$")
BLK_EVENT = re.compile(r"^\s*\d+,\d+\s")
BLK_SECTOR = re.compile(r"^(\d+) \+ (\d+)(?: \(\s*\d+\))? \[(.*)\]$")
BLK_NOSECTOR = re.compile(r"^(?:\(\s*\d+\) )?\[(.*)\]$")
IOLOG_OPS = {"read": Op.READ, "write": Op.WRITE, "sync": Op.FLUSH, "datasync": Op.FLUSH,
             "trim": Op.DISCARD}
FILE_ACTIONS = ("add", "open", "close")


def import_file(path: Path, out: Path) -> CaptureInfo:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            first = fh.readline()
    except OSError as exc:
        raise CaptureError(f"{path}: cannot read ({exc.strerror})") from None
    if first.startswith("fio version "):
        return import_iolog(path, out)
    if BLK_EVENT.match(first):
        return import_blkparse(path, out)
    raise CaptureError(f"{path}:1: neither blkparse text output (lines start 'MAJ,MIN CPU "
                       "SEQ TIME PID ACTION RWBS') nor a fio iolog ('fio version 2 iolog')")


def _fail(path: Path, n: int, what: str, line: str) -> CaptureError:
    return CaptureError(f"{path}:{n}: {what}: {line.rstrip()[:120]!r}")


def import_blkparse(path: Path, out: Path) -> CaptureInfo:
    events_, devices, has_d = [], set(), False
    with open(path, encoding="utf-8", errors="replace") as fh:
        for n, line in enumerate(fh, 1):
            if not BLK_EVENT.match(line):
                continue           # blank lines, the summary ("CPU0 (8,0):", "Total ...")
            if not line.endswith("\n") and fh.read(1) == "":
                raise _fail(path, n, "truncated last line", line)
            m = BLKPARSE.match(line)
            if m is None:
                raise _fail(path, n, "not a blkparse event line", line)
            major, minor, sec, nsec, pid, action, rwbs, rest = m.groups()
            if action not in ("Q", "D", "C"):
                continue
            sm = BLK_SECTOR.match(rest)
            nm = None if sm else BLK_NOSECTOR.match(rest)
            if sm is None and nm is None:
                raise _fail(path, n, f"a {action} event without 'SECTOR + N [..]'", line)
            sector, nr, last = (sm.groups() if sm else ("0", "0", nm.group(1)))
            if action == "C" and not last.lstrip("-").isdigit():
                raise _fail(path, n, "a C event whose [error] is not a number", line)
            devices.add(f"{major}:{minor}")
            has_d |= action == "D"
            events_.append((action, int(sec) * 10**9 + int(nsec), int(pid), rwbs,
                           int(sector), int(nr), last))
    if not events_:
        raise CaptureError(f"{path}: no Q, D or C events: an empty or non-default-format "
                           "blkparse output (use blkparse's default output format)")
    if len(devices) > 1:
        raise CaptureError(f"{path}: events of {len(devices)} devices "
                           f"({', '.join(sorted(devices))}); a capture is of one device: "
                           "blkparse one device's trace")
    issue = "D" if has_d else "Q"
    used = [e for e in events_ if e[0] in (issue, "C")]
    action, t, pid, rwbs, sector, nr, last = zip(*used, strict=True)
    is_issue = np.array(action) == issue
    error = [0 if i else int(x) for i, x in zip(is_issue, last, strict=True)]
    comm = [x.encode() if i else b"" for i, x in zip(is_issue, last, strict=True)]
    notes = ["no wall-clock start time (blkparse times are relative to the trace start)",
             "lost events unknown (blkparse reports drops on stderr, not in its output)"]
    if not has_d:
        notes.insert(0, "no D (issue) events: Q (queued, before merging) used as the issue")
    return _write(out, events(t, is_issue, pid, sector, nr, [r.encode() for r in rwbs],
                              comm, error), CaptureInfo(
        source="blkparse", device=str(path), started_unix=0.0,
        seconds=max(t) / 1e9, dev_t=devices.pop(), tool="blkparse text",
        notes=tuple(notes)))


def _write(out: Path, evs: dict, info: CaptureInfo) -> CaptureInfo:
    """Pair (as a tracefs capture) into the file; the descriptor gets the row count."""
    with CaptureWriter(out) as writer:
        pairing = Pairing(0, lambda comm: True, writer.append)
        pairing.feed(evs)
        pairing.finish()
        extra = dict(info.extra, unmatched_completions=pairing.counts.unmatched_completions,
                     incomplete=pairing.counts.incomplete, requests_seen=pairing.counts.seen,
                     kworker_requests=pairing.counts.kworker, ios_by_op=pairing.counts.by_op)
        info = dataclasses.replace(info, events=writer.rows, extra=extra)
        writer.close(info)
    return info


def import_iolog(path: Path, out: Path) -> CaptureInfo:
    files: set[str] = set()
    cols = {k: [] for k in ("issue_ns", "complete_ns", "sector", "bytes", "op", "pid",
                            "comm", "error")}
    clock, timed = 0, False
    with open(path, encoding="utf-8", errors="replace") as fh:
        header = fh.readline().strip()
        if header not in ("fio version 2 iolog", "fio version 3 iolog"):
            raise _fail(path, 1, "not a fio iolog v2/v3 header ('fio version 2 iolog')",
                        header)
        version = int(header.split()[2])
        for n, line in enumerate(fh, 2):
            if not line.strip():
                continue
            if not line.endswith("\n") and fh.read(1) == "":
                raise _fail(path, n, "truncated last line", line)
            f = line.split()
            try:
                if version == 3:
                    clock, timed, f = int(f[0]) * 1000, True, f[1:]
                if len(f) == 2 and f[1] in FILE_ACTIONS:
                    continue
                if version == 2 and len(f) == 4 and f[1] == "wait":
                    clock, timed = clock + int(f[2]) * 1000, True
                    continue
                if f[1] in ("sync", "datasync") and len(f) in (2, 4):
                    offset, length = 0, 0
                elif len(f) == 4 and f[1] in IOLOG_OPS:
                    offset, length = int(f[2]), int(f[3])
                else:
                    raise ValueError
            except (ValueError, IndexError):
                raise _fail(path, n, f"not a fio iolog v{version} entry", line) from None
            if offset % 512 or length % 512:
                raise _fail(path, n, "offset/length not a multiple of 512 bytes", line)
            files.add(f[0])
            for key, value in zip(cols, (clock, NO_TIME, offset // 512,
                                         length, int(IOLOG_OPS[f[1]]), 0, "fio", 0),
                                  strict=True):
                cols[key].append(value)
    if not timed:               # v2 without `wait`: the order only
        cols["issue_ns"] = [NO_TIME] * len(cols["issue_ns"])
    if len(files) != 1:
        raise CaptureError(f"{path}: I/O on {len(files)} files ({', '.join(sorted(files))}); "
                           "a capture is of one device" if files else f"{path}: no I/O entries")
    notes = ["no completion times: fio iologs record what was issued",
             "no issuing task: every I/O is attributed to comm 'fio', pid 0",
             "lost events unknown"]
    if not timed:
        notes.append("no issue times (v2 without wait entries): issue_ns is NO_TIME, "
                     "only the order of the I/Os is known")
    with CaptureWriter(out) as writer:
        writer.append(cols)
        info = CaptureInfo(source=f"fio-iolog-v{version}", device=files.pop(),
                           started_unix=0.0, seconds=clock / 1e9 if timed else 0.0,
                           events=writer.rows, tool=f"fio iolog v{version} ({path.name})",
                           notes=tuple(notes), extra={"timed": timed, "ios_by_op": {
                               o.name: cols["op"].count(int(o)) for o in Op}})
        writer.close(info)
    return info
