"""The spool: a capture's ring buffer pages on disk as the kernel wrote them, in parts.

While a capture runs it only moves each CPU's `trace_pipe_raw` pages into files (as
blktrace does: splice, no decoding); pts/workload/capture/unspool.py decodes and pairs them
afterwards, at the lowest CPU priority. So the capture costs the traced host almost nothing
per request (docs/capture.md, "Overhead"), and whatever was spooled survives the capture's
process being killed or the host losing power.

A spool is a directory (`CAPTURE.spool` beside the capture file `CAPTURE`):

    spool.json                      what was captured: device, start, step, filter, ...
    header_page, block_rq_issue.format, block_rq_complete.format
                                    the kernel's page and event layouts (decodable anywhere)
    block_bio_queue.format, writeback_*.format, task_*.format
                                    the writeback attribution's events, where traced
    part-000000.cpu0, .cpu1, ...    per part and CPU: whole ring buffer pages, in order
    lost.log                        a JSON line per step: the ring buffer's lost-event count
    end.json                        written last, when the capture ended cleanly

A new part is begun every `part_s` seconds (or PART_BYTES); a closed part's files are
fsync'd (by a thread of its own: the capture's loop never waits for the disk), so a host
that loses power keeps every closed part, and a capture killed with SIGKILL keeps all it
wrote (the page cache outlives the process). A file cut mid-page (power lost while it was
written) is read up to its last whole page and the cut stated.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from pts.workload.capture import ringbuf, tracefs
from pts.workload.capture.events import CaptureError

SUFFIX = ".spool"
META, END, LOST = "spool.json", "end.json", "lost.log"
FORMATS = tracefs.REQUIRED_LAYOUTS          # the layout files every spool has
# ... and those of the writeback attribution's events, where they were traced (a spool
# made before them, or on a kernel without them, has none: it decodes all the same)
EXTRA_FORMATS = tuple(n for n in tracefs.LAYOUT_FILES if n not in FORMATS)
SPOOL_VERSION = 1
# choice: a part per minute: a power loss costs at most the open part (its pages may not
# have reached the disk), and a part's fsync is small enough not to stall the capture
PART_S = 60.0
PART_BYTES = 1 << 30          # ... or per GiB of pages, whichever comes first
# choice: partly filled pages are read at least this often, so a capture killed with
# SIGKILL loses at most this long of events (those still in the ring buffer), and a slow
# device's few events do not wait in the buffer for a page to fill. Full pages are moved
# at every poll. Each such read costs a page per CPU on disk (4 KiB/s per CPU at most).
FLUSH_S = 1.0


class SpoolError(CaptureError):
    """A spool directory that cannot be read as a capture; the message says why."""


def spool_of(capture: Path) -> Path:
    return capture.with_name(capture.name + SUFFIX)


def part_file(path: Path, part: int, cpu: int) -> Path:
    return path / f"part-{part:06d}.cpu{cpu}"


def _write_synced(path: Path, data: bytes) -> None:
    """Write a small file whole: under a temporary name, fsync'd, renamed into place."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class SpoolWriter:
    """Opens the parts' files in turn; `instance.pages_to(writer.files, partial)` fills
    them (tracefs.Instance: splice; remote.RemoteInstance: the agent's pages)."""

    def __init__(self, path: Path, formats: dict[str, bytes], meta: dict, ncpus: int,
                 part_s: float = PART_S):
        self.path = Path(path)
        self.ncpus = ncpus
        self.part_s = part_s
        self.part = -1
        self.files: list[int] = []
        self.bytes = 0
        self.path.mkdir()
        for name, data in formats.items():
            _write_synced(self.path / name, data)
        _write_synced(self.path / META, json.dumps(
            {"spool_version": SPOOL_VERSION, "ncpus": ncpus, "part_s": part_s} | meta,
            sort_keys=True, indent=1).encode())
        self._lost = open(self.path / LOST, "a", encoding="utf-8")   # noqa: SIM115
        self.error: OSError | None = None
        self._synced: queue.SimpleQueue = queue.SimpleQueue()
        self._syncer = threading.Thread(target=self._sync, name="spool-fsync")
        self._syncer.start()
        self._next_part()

    def _next_part(self) -> None:
        self._close_part()
        self.part += 1
        self.files = [os.open(part_file(self.path, self.part, cpu),
                              os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                      for cpu in range(self.ncpus)]
        self.part_began = time.monotonic()
        self.part_bytes_at = self.bytes
        _fsync_dir(self.path)

    def _close_part(self) -> None:
        """Hand the part's files to the syncing thread: an fsync of a part written at full
        rate takes seconds, during which the ring buffer would overrun (measured: 5,272
        events lost in 3 synchronous part closes at 125 k IOPS)."""
        if self._lost is not None:
            self._lost.flush()
        if self.files:
            self._synced.put(self.files + [os.dup(self._lost.fileno())])
        self.files = []
        self._check()

    def _sync(self) -> None:
        while (fds := self._synced.get()) is not None:
            try:
                for fd in fds:
                    if self.error is None:
                        os.fsync(fd)
            except OSError as exc:
                self.error = exc
            finally:
                for fd in fds:
                    os.close(fd)

    def _check(self) -> None:
        if self.error is not None:
            raise self.error

    def moved(self, n: int) -> None:
        """Count `n` bytes just written; begin a new part when this one is due."""
        self.bytes += n
        if time.monotonic() - self.part_began >= self.part_s \
                or self.bytes - self.part_bytes_at >= PART_BYTES:
            self._next_part()

    def lost(self, t_ns: int, total: int, step: bool = True) -> None:
        """The ring buffer's lost-event count (all CPUs, since the start) at t_ns: at a
        step's end, or (step False) at a part's."""
        self._lost.write(json.dumps({"t_ns": t_ns, "lost": total, "step": step}) + "\n")
        self._lost.flush()

    def close(self, end: dict) -> None:
        """The capture ended cleanly: the last part closed, then END written (fsync'd)."""
        self._close_part()
        self._stop_syncer()
        self._check()
        self._lost.close()
        self._lost = None
        _write_synced(self.path / END, json.dumps(end | {"bytes": self.bytes,
                                                         "parts": self.part + 1},
                                                  sort_keys=True, indent=1).encode())
        _fsync_dir(self.path)

    def _stop_syncer(self) -> None:
        if self._syncer.is_alive():
            self._synced.put(None)
            self._syncer.join()

    def abandon(self) -> None:
        """Close the files (an error ended the capture); what was written stays."""
        for fd in self.files:
            os.close(fd)
        self.files = []
        self._stop_syncer()
        if self._lost is not None:
            self._lost.close()
            self._lost = None


@dataclass(frozen=True)
class Spool:
    """A spool opened for reading."""
    path: Path
    meta: dict
    layout: ringbuf.Layout
    files: tuple[tuple[Path, ...], ...]     # per CPU, its part files in order
    end: dict | None                          # None: it did not end cleanly
    lost_marks: tuple[tuple[int, int, bool], ...]   # (t_ns, lost so far, a step's end)
    cut: tuple[tuple[str, int], ...]          # (file, bytes after its last whole page)

    @property
    def parts(self) -> int:
        return max((len(f) for f in self.files), default=0)

    def bytes(self) -> int:
        return sum(p.stat().st_size for cpu in self.files for p in cpu)


def is_spool(path: Path) -> bool:
    return Path(path).is_dir() and (Path(path) / META).is_file()


def open_spool(path: Path) -> Spool:
    """Read a spool's descriptor, layouts and list of parts; SpoolError names what is
    missing or wrong."""
    path = Path(path)
    try:
        meta = json.loads((path / META).read_text())
    except FileNotFoundError:
        raise SpoolError(f"{path}: not a capture spool (no {META})") from None
    except (OSError, ValueError) as exc:
        raise SpoolError(f"{path}/{META}: unreadable ({exc})") from None
    if meta.get("spool_version") != SPOOL_VERSION:
        raise SpoolError(f"{path}: spool version {meta.get('spool_version')}; this "
                         f"snia-pts reads version {SPOOL_VERSION}")
    try:
        texts = [(path / name).read_text() for name in FORMATS]
    except OSError as exc:
        raise SpoolError(f"{path}: a layout file is missing ({exc.filename}): the spool "
                         "cannot be decoded") from None
    extra = {name.removesuffix(".format"): (path / name).read_text()
             for name in EXTRA_FORMATS if (path / name).is_file()}
    try:
        layout = ringbuf.Layout.read(*texts, where=str(path), extra=extra)
    except ringbuf.FormatError as exc:
        raise SpoolError(str(exc)) from None
    ncpus = int(meta["ncpus"])
    files = tuple(tuple(sorted(path.glob(f"part-*.cpu{cpu}"))) for cpu in range(ncpus))
    end = None
    if (path / END).is_file():
        try:
            end = json.loads((path / END).read_text())
        except ValueError:
            end = None                     # cut by a power loss: as if not ended
    marks = []
    if (path / LOST).is_file():
        for line in (path / LOST).read_text().splitlines():
            try:
                mark = json.loads(line)
                marks.append((int(mark["t_ns"]), int(mark["lost"]), bool(mark["step"])))
            except (ValueError, KeyError, TypeError):
                break                      # a line cut by a power loss ends the log
    cut = tuple((p.name, p.stat().st_size % layout.page_size)
                for cpu in files for p in cpu if p.stat().st_size % layout.page_size)
    return Spool(path, meta, layout, files, end, tuple(marks), cut)


def pages(spool: Spool, cpu: int, chunk_pages: int):
    """One CPU's whole pages, part after part, `chunk_pages` at a time (a part's trailing
    partial page is skipped: Spool.cut states it)."""
    size = spool.layout.page_size
    for path in spool.files[cpu]:
        with open(path, "rb") as fh:
            while True:
                data = fh.read(chunk_pages * size)
                whole = len(data) - len(data) % size
                if whole:
                    yield data[:whole]
                if len(data) < chunk_pages * size:
                    break
