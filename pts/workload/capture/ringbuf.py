"""The kernel's trace ring buffer pages (per-CPU `trace_pipe_raw`), decoded to events.

Why binary: on this project's 2-vCPU VM, only reading the *text* `trace_pipe` (the kernel
formats every event as a line) cost fio ~45 % of its IOPS at ~250 k IOPS and still lost
events, while reading the same events as raw pages cost a few percent and lost none
(docs/capture.md, "Lost events"). Field offsets come from the events' `format` files and the
page layout from `events/header_page`, so a kernel that moves a field is read right.

Page (`header_page`): u64 timestamp, then `commit` (the data size; high bits flag missed
events), then the data. Each entry starts with a u32: type_len (5 bits), time_delta (27):
type_len 1..28: a data event of type_len x 4 bytes; 0: a data event whose length (plus 4) is
the next u32; 29: padding (time_delta 0: the rest of the page is empty); 30: a time extend
(delta = next u32 << 27 | time_delta); 31: an absolute time stamp. Times accumulate from
the page's timestamp (ns of the instance's trace clock). kernel/trace/ring_buffer.c.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

FIELD = re.compile(r"field:(?P<decl>[^;]+);\s*offset:(?P<off>\d+);\s*size:(?P<size>\d+);")
TS_SHIFT = 27
ABS_BITS = 59                  # an absolute time stamp keeps the low 59 bits
COMMIT_MASK = (1 << 20) - 1    # commit's size bits (the rest: missed-events flags)
PADDING, TIME_EXTEND, TIME_STAMP = 29, 30, 31
ISSUE_FIELDS = ("common_pid", "sector", "nr_sector", "rwbs", "comm")
COMPLETE_FIELDS = ("common_pid", "sector", "nr_sector", "rwbs", "error")
# The writeback attribution's events (tracefs.ATTRIBUTION_EVENTS), decoded generically from
# their format files into the same columns: kind, then per kind which field fills which
# column (ino: an inode, or the task a task event names).
ISSUE, COMPLETE, BIO, DIRTY, WB_START, WB_END, TASK_NEW, TASK_RENAME = range(8)
EXTRA = {   # event name -> (kind, {column: field})
    "block_bio_queue": (BIO, {"pid": "common_pid", "sector": "sector", "nr": "nr_sector",
                              "rwbs": "rwbs", "comm": "comm"}),
    "writeback_dirty_folio": (DIRTY, {"pid": "common_pid", "ino": "ino", "sector": "index"}),
    "writeback_dirty_page": (DIRTY, {"pid": "common_pid", "ino": "ino", "sector": "index"}),
    "writeback_single_inode_start": (WB_START, {"pid": "common_pid", "ino": "ino"}),
    # sector: pages written, nr: the budget it had (nr_to_write): fewer written, all written
    "writeback_single_inode": (WB_END, {"pid": "common_pid", "ino": "ino", "sector": "wrote",
                                        "nr": "nr_to_write"}),
    "task_newtask": (TASK_NEW, {"pid": "common_pid", "ino": "pid", "comm": "comm"}),
    "task_rename": (TASK_RENAME, {"pid": "common_pid", "ino": "pid", "comm": "newcomm"}),
}


class FormatError(RuntimeError):
    """A format file lacks what the decoder needs."""


def fields_of(text: str, where: str) -> tuple[int, dict[str, tuple[int, int]]]:
    """(event id, {field: (offset, size)}) of an event's `format` file."""
    m = re.search(r"^ID: (\d+)$", text, re.M)
    if m is None:
        raise FormatError(f"{where}: no ID line")
    out = {}
    for f in FIELD.finditer(text):
        name = f["decl"].split()[-1].split("[")[0]
        out[name] = (int(f["off"]), int(f["size"]))
    return int(m[1]), out


@dataclass(frozen=True)
class Layout:
    """Where things are in a page and in the two events, for this kernel."""
    data_offset: int           # bytes before a page's data
    page_size: int
    issue_id: int
    complete_id: int
    issue: dict[str, tuple[int, int]]
    complete: dict[str, tuple[int, int]]
    # the attribution's events present: id -> (kind, {column: (offset, size)})
    extra: dict[int, tuple[int, dict[str, tuple[int, int]]]] = field(default_factory=dict)

    @property
    def kinds(self) -> frozenset[int]:
        return frozenset(k for k, _ in self.extra.values())

    @classmethod
    def read(cls, header_page: str, issue_format: str, complete_format: str,
             where: str = "tracefs", extra: dict[str, str] | None = None) -> Layout:
        """`extra`: event name -> its format text, for the attribution's events kept
        (EXTRA; an old spool has none)."""
        page = {f["decl"].split()[-1]: (int(f["off"]), int(f["size"]))
                for f in FIELD.finditer(header_page)}
        if "data" not in page or "commit" not in page:
            raise FormatError(f"{where}/events/header_page: no commit/data fields")
        issue_id, issue = fields_of(issue_format, f"{where} block_rq_issue/format")
        complete_id, complete = fields_of(complete_format, f"{where} block_rq_complete/format")
        for name, have, need in (("block_rq_issue", issue, ISSUE_FIELDS),
                                 ("block_rq_complete", complete, COMPLETE_FIELDS)):
            missing = [f for f in need if f not in have]
            if missing:
                raise FormatError(f"{where}: {name}/format lacks fields {missing}")
        off, size = page["data"]
        more = {}
        for name, text in (extra or {}).items():
            kind, columns = EXTRA[name]
            ev_id, have = fields_of(text, f"{where} {name}/format")
            missing = [f for f in columns.values() if f not in have]
            if missing:
                raise FormatError(f"{where}: {name}/format lacks fields {missing}")
            more[ev_id] = (kind, {col: have[f] for col, f in columns.items()})
        return cls(off, off + size, issue_id, complete_id, issue, complete, more)

    @classmethod
    def of_instance(cls, path: Path) -> Layout:
        ev = path / "events"
        return cls.read((ev / "header_page").read_text(),
                        (ev / "block/block_rq_issue/format").read_text(),
                        (ev / "block/block_rq_complete/format").read_text(), str(path))


def walk(pages: bytes, layout: Layout) -> tuple[np.ndarray, np.ndarray]:
    """(byte offset of each data event's payload, its time in ns), in page order.

    All pages are walked at once: each step moves every page's cursor to its next entry
    (numpy over the pages), so the Python loop runs once per entry *rank* (at most a page's
    entries, ~80), not once per event, and only the entries' words are read. A page holding
    an absolute time stamp is walked by `walk_page` (rare: not the default)."""
    per_page = layout.page_size // 4
    n = len(pages) // layout.page_size
    if not n:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    w = np.frombuffer(pages, dtype="<u4", count=n * per_page).reshape(n, per_page)
    first = layout.data_offset // 4
    end = first + ((w[:, 2].astype(np.int64) & COMMIT_MASK) + 3) // 4
    page = np.flatnonzero(end > first)
    cur = np.full(len(page), first, np.int64)
    rows, cols, heads, words = [], [], [], []
    while len(page):            # one step: every page's cursor to its next entry
        h = w[page, cur].astype(np.int64)
        nxt = w[page, np.minimum(cur + 1, per_page - 1)].astype(np.int64)
        kind, delta = h & 31, h >> 5
        step = np.where((kind >= 1) & (kind <= 28), kind + 1, 2)
        sized = (kind == 0) | ((kind == PADDING) & (delta != 0))
        step = np.where(sized, 1 + (nxt + 3) // 4, step)
        step = np.where((kind == PADDING) & (delta == 0), per_page, step)   # page's end
        rows.append(page)
        cols.append(cur)
        heads.append(h)
        words.append(nxt)
        cur = cur + step
        more = cur < end[page]
        page, cur = page[more], cur[more]
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    r = np.concatenate(rows)
    order = np.argsort(r, kind="stable")     # per page, entries stay in walk order
    r, c = r[order], np.concatenate(cols)[order]
    h, nxt = np.concatenate(heads)[order], np.concatenate(words)[order]
    k, d = h & 31, h >> 5
    s_starts: list[int] = []
    s_times: list[int] = []
    if (k == TIME_STAMP).any():           # absolute stamps: those pages the slow way
        slow = np.unique(r[k == TIME_STAMP])
        for p in slow.tolist():
            a, t = walk_page(pages[p * layout.page_size:(p + 1) * layout.page_size], layout)
            s_starts += [x + p * layout.page_size for x in a]
            s_times += t
        fast = ~np.isin(r, slow)
        r, c, k, d, nxt = r[fast], c[fast], k[fast], d[fast], nxt[fast]
    add = np.where(k <= 28, d, 0) + np.where(k == TIME_EXTEND, nxt << TS_SHIFT | d, 0)
    page_start = np.r_[True, r[1:] != r[:-1]]
    total = np.cumsum(add)
    base = np.maximum.accumulate(np.where(page_start, total - add, 0))
    ts = (w[:, 0].astype(np.int64) | w[:, 1].astype(np.int64) << 32)[r] + total - base
    data = k <= 28
    starts = r[data] * layout.page_size + c[data] * 4 + np.where(k[data] == 0, 8, 4)
    starts = np.r_[starts, np.asarray(s_starts, np.int64)]
    times = np.r_[ts[data], np.asarray(s_times, np.int64)]
    return starts, times


def walk_page(page: bytes, layout: Layout) -> tuple[list[int], list[int]]:
    """One page entry by entry (the reference the bulk walk is tested against)."""
    starts: list[int] = []
    times: list[int] = []
    words = np.frombuffer(page, dtype="<u4").tolist()
    ts = words[0] | words[1] << 32
    i = layout.data_offset // 4
    end = i + ((words[2] & COMMIT_MASK) + 3) // 4
    while i < end:
        h = words[i]
        kind = h & 31
        if kind and kind <= 28:
            ts += h >> 5
            starts.append(i * 4 + 4)
            times.append(ts)
            i += kind + 1
        elif kind == 0:
            ts += h >> 5
            starts.append(i * 4 + 8)
            times.append(ts)
            i += 1 + (words[i + 1] + 3) // 4
        elif kind == TIME_EXTEND:
            ts += words[i + 1] << TS_SHIFT | h >> 5
            i += 2
        elif kind == TIME_STAMP:
            low = words[i + 1] << TS_SHIFT | h >> 5
            ts = ts >> ABS_BITS << ABS_BITS | low
            i += 2
        else:                       # padding
            if h >> 5 == 0:
                break
            i += 1 + (words[i + 1] + 3) // 4
    return starts, times


def _take(buf: np.ndarray, starts: np.ndarray, field: tuple[int, int]) -> np.ndarray:
    off, size = field
    idx = starts[:, None] + off + np.arange(size)
    return buf[idx]


def _cstr(buf: np.ndarray, starts: np.ndarray, field: tuple[int, int]) -> np.ndarray:
    """A char[N] field up to its first NUL (the bytes after it are whatever the buffer
    held)."""
    raw = _take(buf, starts, field)
    raw[np.cumsum(raw == 0, axis=1) > 0] = 0
    return raw.view(f"S{field[1]}")[:, 0]


def _int(buf, starts, field, dtype) -> np.ndarray:
    raw = np.ascontiguousarray(_take(buf, starts, field))
    return raw.view(dtype).reshape(-1)


def decode(pages: bytes, layout: Layout) -> dict[str, np.ndarray]:
    """The events of whole pages as columns: t (ns), kind (ISSUE, COMPLETE, or an
    attribution event's), issue (bool), pid, sector (int64: a flush completes at -1), nr,
    rwbs and comm (bytes), error, ino (the attribution events': EXTRA)."""
    starts, t = walk(pages, layout)
    buf = np.frombuffer(pages, dtype=np.uint8)
    if not len(starts):
        return empty()
    ev_id = _int(buf, starts, (0, 2), "<u2")
    issue = ev_id == layout.issue_id
    rq = issue | (ev_id == layout.complete_id)
    other = np.isin(ev_id, list(layout.extra)) if layout.extra else np.zeros(len(t), bool)
    ours = rq | other
    starts, t, issue, rq, ev_id = starts[ours], t[ours], issue[ours], rq[ours], ev_id[ours]
    out = _rq_columns(buf, starts, t, issue, rq, layout)
    kind = np.where(issue, ISSUE, COMPLETE).astype(np.int8)
    for code, (k, columns) in layout.extra.items():
        mask = ev_id == code
        if not mask.any():
            continue
        kind[mask] = k
        at = starts[mask]
        for col, f in columns.items():
            if col in ("rwbs", "comm"):
                out[col][mask] = _cstr(buf, at, f)
            else:
                out[col][mask] = _int(buf, at, f, {4: "<i4", 8: "<i8", 2: "<i2"}[f[1]])
    out["kind"] = kind
    return out


def _rq_columns(buf, starts, t, issue, rq, layout) -> dict[str, np.ndarray]:
    """The block_rq events' columns (rows of other events left zero)."""
    complete = rq & ~issue
    out = {"t": t, "issue": issue}
    n = len(starts)
    for name, dtype in (("common_pid", "<i4"), ("sector", "<i8"), ("nr_sector", "<u4")):
        col = np.zeros(n, dtype=np.int64)
        for mask, fields in ((issue, layout.issue), (complete, layout.complete)):
            if mask.any():
                col[mask] = _int(buf, starts[mask], fields[name], dtype)
        out[{"common_pid": "pid", "nr_sector": "nr"}.get(name, name)] = col
    rwbs = np.zeros(n, dtype="S10")
    comm = np.zeros(n, dtype="S16")
    error = np.zeros(n, dtype=np.int64)
    if issue.any():
        rwbs[issue] = _cstr(buf, starts[issue], layout.issue["rwbs"])
        comm[issue] = _cstr(buf, starts[issue], layout.issue["comm"])
    if complete.any():
        rwbs[complete] = _cstr(buf, starts[complete], layout.complete["rwbs"])
        error[complete] = _int(buf, starts[complete], layout.complete["error"], "<i4")
    out.update(rwbs=rwbs, comm=comm, error=error, ino=np.zeros(n, np.int64))
    return out


def empty() -> dict[str, np.ndarray]:
    return {"t": np.zeros(0, np.int64), "issue": np.zeros(0, bool),
            "pid": np.zeros(0, np.int64), "sector": np.zeros(0, np.int64),
            "nr": np.zeros(0, np.int64), "rwbs": np.zeros(0, "S10"),
            "comm": np.zeros(0, "S16"), "error": np.zeros(0, np.int64),
            "ino": np.zeros(0, np.int64), "kind": np.zeros(0, np.int8)}
