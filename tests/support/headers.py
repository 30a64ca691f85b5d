"""The SNIA header block of every test page, read back from the rendered PDF and compared
with the run folder it was rendered from (issue 21 §1): a header that says something the
stored data does not fails.

    mismatches(pdf, folder) -> list of "page N (test): column: expected ... got ..."

The PDF side: `pdftotext -bbox` (word boxes), each page's test from its band line ("DIRTH —
All Points"), the block's words (6.3 pt, below its four column heads) split into the four
columns by the heads' x positions. The data side: run.json and ledger.jsonl read here as raw
JSON, and each column's expected text written out from those records by this module's own
code (not pts.report's): the whole column must be equal, so every cell is compared.
"""

from __future__ import annotations

import html
import json
import math
import re
import subprocess
from pathlib import Path

HEADS = ("Test platform", "Device under test", "Set-up parameters", "Test parameters")
BLOCK_WORD_HEIGHT = 6.3      # the block's 6.3 pt font gives ~5.8 pt word boxes; body >= 6.9
MISSING = "not recorded"
NO_WIPC = "none: starts from the purged drive (no WIPC)"
WCD = {"disabled", "write through", "write-through", "wcd", "off", "0", "false"}
WCE = {"enabled", "write back", "write-back", "wce", "on", "1", "true"}


# ----------------------------------------------------------------------------- the PDF

WORD = re.compile(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">'
                  r'(.*?)</word>')


def pdf_pages(pdf: Path) -> list[list[tuple[float, float, float, str]]]:
    """Per page its words as (x, y, height, text)."""
    out = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], check=True,
                         capture_output=True, text=True).stdout
    return [[(float(m[1]), float(m[2]), float(m[4]) - float(m[2]), html.unescape(m[5]))
             for m in WORD.finditer(page)] for page in out.split("<page ")[1:]]


def _lines(words) -> list[list[tuple[float, float, float, str]]]:
    """Words in lines (tops within 2.5 pt: a band line mixes font sizes), left to right."""
    lines: list[list] = []
    for w in sorted(words, key=lambda w: w[1]):
        if lines and w[1] - lines[-1][0][1] < 2.5:
            lines[-1].append(w)
        else:
            lines.append([w])
    return [sorted(line, key=lambda w: w[0]) for line in lines]


def page_test(words) -> str | None:
    """The band's second line, "Title — subtitle": the test's title."""
    lines = _lines(words)
    if len(lines) < 2:
        return None
    text = " ".join(w[3] for w in lines[1])
    return text.split(" — ")[0] if " — " in text else None


def header_block(words) -> list[str] | None:
    """The four columns' text, or None when the page has no header block."""
    lines = _lines(words)
    k = next((k for k, line in enumerate(lines)
              if all(h in " ".join(w[3] for w in line) for h in HEADS)), None)
    if k is None:
        return None
    heads = lines[k]
    starts = []
    for h in HEADS:
        first = h.split()[0]
        x = [w[0] for w in heads if w[3] == first and all(w[0] > s for s in starts)][0]
        starts.append(x - 1)
    cols: list[list[str]] = [[], [], [], []]
    last_y = heads[0][1]
    for line in lines[k + 1:]:
        small = [w for w in line if w[2] < BLOCK_WORD_HEIGHT]
        if not small or line[0][1] - last_y > 12:
            break
        last_y = line[0][1]
        for w in small:
            col = max(i for i, s in enumerate(starts) if w[0] >= s)
            cols[col].append(w[3])
    return [" ".join(c) for c in cols]


# ----------------------------------------------------------------------------- the data

def load(folder: Path) -> tuple[dict, dict[str, list[dict]]]:
    info = json.loads((folder / "run.json").read_text())
    by_test: dict[str, list[dict]] = {}
    for line in (folder / "ledger.jsonl").read_text().splitlines():
        if line.strip():
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue          # a torn last line: the report skips it too
            if isinstance(r.get("test"), str):
                by_test.setdefault(r["test"], []).append(r)
    return info, by_test


def _of(recs: list[dict], kind: str) -> list[dict]:
    return [r for r in recs if r.get("type") == kind]


def _last(recs: list[dict], kind: str) -> dict | None:
    found = _of(recs, kind)
    return found[-1] if found else None


def _num(v: float) -> str:
    """~4 significant digits with thousands separators (the report's number style)."""
    if v == 0:
        return "0"
    decimals = min(6, max(0, 3 - math.floor(math.log10(abs(v)))))
    return f"{v:,.{decimals}f}"


def _kib(nbytes) -> str:
    return MISSING if nbytes is None else f"{nbytes / 1024:g} KiB"


def _val(v) -> str:
    if v is None:
        return "n/a"
    return f"{v:g}" if isinstance(v, float) else str(v)


def _toio(tc, qd) -> str:
    if isinstance(tc, int) and isinstance(qd, int):
        return f"{tc}/{qd} (TOIO {tc * qd})"
    return f"{MISSING if tc is None else tc}/{MISSING if qd is None else qd}"


class Test:
    """One ledger test's raw records, as the report's header should state them."""

    def __init__(self, name: str, recs: list[dict], by_test: dict[str, list[dict]]):
        self.name, self.recs, self.by_test = name, recs, by_test
        start = _last(recs, "test_start") or {}
        self.title = start.get("title") or name.upper()
        self.p = start.get("parameters") or {}
        self.end = _last(recs, "test_end")
        self.rounds = sorted({r["round"] for r in _of(recs, "round")})

    def point_seconds(self, old: str):
        """--point-seconds as stored: `point_seconds`, or the name a run written before it
        had one name used for this test (WSAT `sample_seconds`, XSR `interval_seconds`)."""
        return self.p.get("point_seconds", self.p.get(old))

    @property
    def state(self) -> str:
        if self.end is None or self.end["status"] == "interrupted":
            return "incomplete"
        return self.end["status"]

    @property
    def window(self) -> tuple[int, int] | None:
        if not self.rounds:
            return None
        if self.end is not None and self.end.get("window"):
            return tuple(self.end["window"])
        tail = self.rounds[-int(self.p.get("window_rounds") or 5):]
        return tail[0], tail[-1]

    def mixes(self) -> str:
        return ", ".join(self.p.get("rw_mixes") or []) or MISSING

    def sizes(self) -> str:
        return ", ".join(_kib(b) for b in self.p.get("block_sizes") or []) or MISSING

    def rounds_text(self) -> str:
        w = self.window
        if w is None:
            return "no round completed"
        span = f"rounds {w[0]}..{w[1]}"
        return {"steady": f"SS {span}", "complete": f"SS {span}",
                "not_steady": f"{span}, SS NOT ACHIEVED"}.get(self.state,
                                                             f"{span}, {self.state.upper()}")

    def note(self) -> str:
        if self.state == "complete":
            if self.name == "hir":
                return "complete; its preconditioning reached steady state"
            if self.name == "xsr":
                return "complete (XSR has no steady state)"
            if self.name == "wsat":
                return "ran to its stop condition (no SS required)"
            return "complete"
        return {"steady": "steady state reached",
                "not_steady": "SS NOT ACHIEVED"}.get(self.state, self.state.upper())


def _purge(recs: list[dict], where: str = "") -> str:
    p = _last(recs, "purge")
    if p is None:
        return MISSING + where
    if p["method"] == "none":
        return f"none (--purge none: no purge ran){where}"
    return (p["method"] + ("" if p.get("ok") else ", FAILED")
            + (", not a spec purge" if p.get("deviation") else "") + where)


def _cache(t: Test) -> str:
    before = t.by_test.get(t.p.get("continues_from") or "", [])
    caches = _of(before, "write_cache") + _of(t.recs, "write_cache")
    if not caches:
        return f"{MISSING} (required {t.p.get('write_cache') or MISSING})"
    actual = list(dict.fromkeys(str(c["actual"]) for c in caches))
    wanted = {"WCD": WCD, "WCE": WCE}
    bad = any(str(c["actual"]).strip().lower() not in wanted.get(c["required"].upper(), ())
              for c in caches)
    return (f"required {caches[-1]['required']}, actual {' / '.join(actual)}"
            + ("; DOES NOT MATCH" if bad else "")
            + ("; not settable" if any(not c.get("settable") for c in caches) else ""))


def _engine(options: dict) -> str:
    """--ioengine as run.json records it (a run from before the option: libaio); io_uring
    runs with fixed buffers and registered files, --io-poll adds polled completion."""
    name = options.get("ioengine", "libaio")
    if name == "io_uring":
        polled = ", polled completion" if options.get("io_poll") is True else ""
        return f"io_uring (fixed buffers, registered files{polled})"
    return name


def expected(info: dict, t: Test, capacity: int | None) -> list[list[tuple[str, str]]]:
    pl, tools, d = info.get("platform") or {}, info.get("tools") or {}, info.get("device") or {}
    platform = [("Host", str(pl.get("hostname", "n/a"))),
                ("OS", f"{pl.get('os', 'n/a')}, kernel {pl.get('kernel', 'n/a')}"),
                ("CPU", f"{pl.get('cpu', 'n/a')} ({pl.get('cpus', '?')} CPUs)"),
                ("Tools", f"{tools.get('fio', 'fio ?')}, snia-pts {tools.get('snia-pts', '?')}"),
                ("I/O engine", _engine(info.get("options") or {}))]
    dut = [("Model", d.get("model") or "unknown model"),
           ("S/N", d.get("serial") or "unknown serial"), ("FW", d.get("firmware") or "unknown"),
           ("Capacity", f"{_num((capacity or 0) / 1e9)} GB, {d.get('transport') or 'unknown'}"
            + (", EMULATED" if d.get("emulated") is True else "")),
           ("Write cache", _cache(t))]
    ar = t.p.get("active_range_pct")
    setup = [("Data pattern", str(t.p.get("data_pattern") or MISSING)),
             ("ActiveRange", MISSING if ar is None else f"{_val(ar)} %")]
    kind = ("dirth-cbw" if t.p.get("continues_from") else "pre" if t.name.endswith("-precondition")
            else t.name.split("-")[0])
    more_setup, stimulus = {"dirth-cbw": _dirth_cbw, "pre": _pre, "hir": _hir, "xsr": _xsr,
                            "wsat": _wsat}.get(kind, _round)(t, capacity)
    return [platform, dut, setup + more_setup, stimulus]


def _round(t: Test, capacity):
    w = _last(t.recs, "wipc")
    if w is None:
        pc1 = "none recorded"
    else:
        times = f", {w['bytes_expected'] / capacity:.3g}X capacity" \
            if w.get("bytes_expected") and capacity else ""
        pc1 = f"SEQ {_kib(w['block_size'])} W, TC {_val(w.get('thread_count'))}/QD " \
              f"{_val(w.get('queue_depth'))}{times}"
    setup = [("Purge", _purge(t.recs)), ("Pre-Condition 1", pc1),
             ("Pre-Condition 2", f"{t.title} loop, {t.rounds_text()}")]
    stim = [("Stimulus", f"{t.p.get('access') or MISSING} ({t.title} loop)"),
            ("R/W mixes (outer loop)", t.mixes()), ("Block sizes (inner loop)", t.sizes()),
            ("TC/QD", _toio(t.p.get("thread_count"), t.p.get("queue_depth"))),
            ("Note", t.note())]
    return setup, stim


def _wsat(t: Test, capacity):
    res = _last(t.recs, "wsat_result") or {}
    win = res.get("ss_window") or []
    final = (f"samples {win[0]}..{win[1]}, "
             + ("steady" if res.get("final_window_steady") else "NOT steady")) \
        if len(win) == 2 else MISSING
    samples = len({s["sample"] for s in _of(t.recs, "sample")})
    setup = [("Purge", _purge(t.recs)), ("Pre-Condition 1", NO_WIPC),
             ("Pre-Condition 2", "none: the writes run from FOB")]
    stim = [("Stimulus", f"{t.p.get('access') or MISSING} {t.sizes()} {t.mixes()}, continuous"),
            ("Samples", f"{samples} x {_val(t.point_seconds('sample_seconds'))} s"),
            ("Final window", final),
            ("TC/QD", _toio(t.p.get("thread_count"), t.p.get("queue_depth"))),
            ("Note", t.note())]
    return setup, stim


def _workload(t: Test) -> str:
    return f"{t.p.get('access') or MISSING} {t.p.get('workload') or MISSING} {t.mixes()}"


def _pre(t: Test, capacity):
    setup = [("Purge", _purge(t.recs)), ("Pre-Condition 1", NO_WIPC),
             ("Pre-Condition 2", "none")]
    rnd = t.p.get("round_seconds")
    stim = [("Stimulus", _workload(t)),
            ("Round", f"{MISSING if rnd is None else _val(rnd)} s of writes, the last "
                      f"{_val(t.p.get('point_seconds'))} s measured"),
            ("TC/QD", _toio(t.p.get("thread_count"), t.p.get("queue_depth"))),
            ("Rounds", t.rounds_text()), ("Note", t.note())]
    return setup, stim


def _dirth_cbw(t: Test, capacity):
    name = t.p["continues_from"]
    pre = Test(name, t.by_test[name], t.by_test) if name in t.by_test else None
    pc2 = ("Pre-Condition 2", f"{t.title} demand loop, {t.rounds_text()}")
    if pre is None:
        setup = [("Purge", f"{MISSING} ({name} not in the ledger)"),
                 ("Pre-Condition 1", f"{MISSING} ({name})"), pc2]
    else:
        setup = [("Purge", _purge(pre.recs, f" (under {name})")),
                 ("Pre-Condition 1", f"{_workload(pre)}, TC/QD "
                                     f"{_toio(pre.p.get('thread_count'), pre.p.get('queue_depth'))}"
                                     f", {pre.rounds_text()}"), pc2]
    tcs, qds = t.p.get("thread_counts") or [], t.p.get("queue_depths") or []
    stim = [("Stimulus", _workload(t))]
    if t.p.get("bssplit"):
        stim.append(("Block-size mix", ", ".join(t.p.get("block_size_mix") or []) or MISSING))
    if t.p.get("random_distribution"):
        stim.append(("LBA zones (% I/O / % LBA)",
                     ", ".join(t.p["random_distribution"].removeprefix("zoned:").split(":"))))
    toios = [a * b for a in tcs for b in qds]
    stim += [("TC (outer loop)", ", ".join(map(str, tcs)) or MISSING),
             ("QD (inner loop)", ", ".join(map(str, qds)) or MISSING),
             ("TOIO", f"{min(toios)}..{max(toios)}" if toios else MISSING),
             ("Note", t.note())]
    return setup, stim


def _hir(t: Test, capacity):
    base = _last(t.recs, "hir_baseline")
    pre = f"RND {t.sizes()} {t.mixes()}, TC/QD " \
          f"{_toio(t.p.get('thread_count'), t.p.get('queue_depth'))}, "
    if base is not None:
        win = f"rounds {base['window'][0]}..{base['window'][1]}" if base.get("window") \
            else "no window"
        pre += f"steady at {win}" if base["steady"] else f"NOT steady ({win})"
    else:
        pre += f"{t.rounds_text()} (no baseline recorded)"
    setup = [("Purge", _purge(t.recs)), ("Pre-Condition 1", NO_WIPC), ("Pre-Condition 2", pre)]
    idle = t.p.get("idle_seconds") or []
    states = {r["state"] for r in _of(t.recs, "hir_state")}
    w = _val(t.p.get("write_seconds"))
    stim = [("Stimulus", f"{t.p.get('access') or MISSING} {t.sizes()} {t.mixes()}, TC/QD "
                         f"{_toio(t.p.get('thread_count'), t.p.get('queue_depth'))}"),
            ("Wait states", f"{_val(t.p.get('repetitions'))} x ({w} s W + "
                            f"{', '.join(map(str, idle)) or MISSING} s idle)"),
            ("Return to baseline", f"{_val(t.p.get('baseline_repetitions'))} x {w} s W after "
                                   "each"),
            ("Note", f"{len(states)} of {len(idle)} wait states done; {t.note()}")]
    return setup, stim


def _xsr(t: Test, capacity):
    setup = [("Purge", _purge(t.recs)), ("Pre-Condition 1", NO_WIPC),
             ("Pre-Condition 2", "none")]
    ran = {g["group"]: g for g in _of(t.recs, "xsr_group")}
    stim = []
    for g in t.p.get("groups") or []:
        src = ran.get(g["group"], g)
        stim.append((f"Group {g['group']}", f"{src['pattern'].upper()} "
                     f"{_kib(src['block_size'])} W, {src['seconds']} s"
                     + ("" if g["group"] in ran else " (not run)")))
    stim += [("TC/QD", _toio(t.p.get("thread_count"), t.p.get("queue_depth"))),
             ("Interval", f"{_val(t.point_seconds('interval_seconds'))} s"), ("Note", t.note())]
    return setup, stim


# ----------------------------------------------------------------------------- the check

def _text(rows: list[tuple[str, str]]) -> str:
    return re.sub(r"\s+", " ", " ".join(f"{k} {v}" for k, v in rows)).strip()


def mismatches(pdf: Path, folder: Path) -> tuple[list[str], dict[str, int]]:
    """Every header block of `pdf` against `folder`'s data: (mismatches, pages checked per
    test name). A test page without a header block is a mismatch too."""
    info, by_test = load(folder)
    tests = {n: Test(n, recs, by_test) for n, recs in by_test.items()
             if _of(recs, "test_start")}
    by_title = {t.title: t for t in tests.values()}
    capacity = (info.get("device") or {}).get("capacity_bytes")
    bad, seen = [], {}
    for n, words in enumerate(pdf_pages(pdf), 1):
        t = by_title.get(page_test(words) or "")
        if t is None:
            continue
        got = header_block(words)
        if got is None:
            bad.append(f"page {n} ({t.name}): no header block")
            continue
        seen[t.name] = seen.get(t.name, 0) + 1
        for head, want, have in zip(HEADS, expected(info, t, capacity), got, strict=True):
            if _text(want) != have:
                bad.append(f"page {n} ({t.name}) {head}:\n  expected {_text(want)!r}\n"
                           f"  got      {have!r}")
    return bad, seen
