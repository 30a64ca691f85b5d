"""The ring buffer decoder on pages recorded for real: the per-CPU trace_pipe_raw of a tracefs
instance and, of the same events, the kernel's own text rendering (`trace`), with the
instance's format files (tests/data/capture/README.md, raw/)."""

from __future__ import annotations

import numpy as np
import pytest

from pts.workload.capture import ringbuf
from pts.workload.capture.pairing import Pairing, parse_text
from tests.support.helpers import DATA

RAW = DATA / "capture" / "raw"


def layout() -> ringbuf.Layout:
    return ringbuf.Layout.read((RAW / "header_page").read_text(),
                               (RAW / "block_rq_issue.format").read_text(),
                               (RAW / "block_rq_complete.format").read_text())


def decoded() -> dict[str, np.ndarray]:
    parts = [ringbuf.decode(p.read_bytes(), layout()) for p in sorted(RAW.glob("cpu*.raw"))]
    ev = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    order = np.argsort(ev["t"], kind="stable")
    return {k: v[order] for k, v in ev.items()}


def test_layout_comes_from_the_format_files():
    lay = layout()
    assert (lay.data_offset, lay.page_size) == (16, 4096)
    assert lay.issue["sector"] == (16, 8) and lay.complete["error"] == (28, 4)
    broken = (RAW / "block_rq_issue.format").read_text().replace("field:sector_t sector", "x")
    with pytest.raises(ringbuf.FormatError, match="lacks fields"):
        ringbuf.Layout.read((RAW / "header_page").read_text(), broken,
                            (RAW / "block_rq_complete.format").read_text())


def test_pages_decode_to_the_events_the_kernel_printed():
    ev = decoded()
    text, unparsed = parse_text((RAW / "trace.txt").read_bytes())
    assert unparsed == 0 and len(ev["t"]) == len(text["t"]) == 279
    # the text shows µs, rounded
    assert (np.abs(ev["t"] - text["t"]) <= 1000).all()
    for name in ("issue", "pid", "sector", "nr", "rwbs", "comm", "error"):
        assert (ev[name] == text[name]).all(), name
    assert b"FF" in set(ev["rwbs"]) and (ev["sector"] == -1).any()     # flush completions


def test_time_extends_carry_gaps_longer_than_a_delta_holds():
    """The sample ends with three reads 0.3 s apart on CPU 0: gaps over 2^27 ns need a
    time-extend entry (ring_buffer.c), which the times above then depend on."""
    cpu0 = ringbuf.decode((RAW / "cpu0.raw").read_bytes(), layout())
    assert (np.diff(cpu0["t"]) > 1 << ringbuf.TS_SHIFT).sum() >= 3


def test_raw_and_text_pair_into_the_same_rows():
    def rows(ev):
        out = []
        pairing = Pairing(0, lambda c: True, out.append)
        pairing.feed(ev)
        pairing.finish()
        return {k: np.concatenate([np.asarray(o[k]) for o in out]) for k in out[0]}, \
            pairing.counts
    raw, raw_counts = rows(decoded())
    text, text_counts = rows(parse_text((RAW / "trace.txt").read_bytes())[0])
    assert len(raw["issue_ns"]) == 133 and raw_counts == text_counts
    for name in ("sector", "bytes", "op", "pid", "comm", "error"):
        assert (raw[name] == text[name]).all(), name
    assert (np.abs(raw["complete_ns"] - text["complete_ns"]) <= 1000).all()
    assert (raw["issue_ns"] % 1000 != 0).any()          # ns resolution from the pages


def test_an_empty_or_padding_page_gives_no_events():
    page = bytearray(4096)              # timestamp 0, commit 0: nothing written
    assert len(ringbuf.decode(bytes(page), layout())["t"]) == 0


def test_bulk_walk_equals_the_entry_by_entry_walk():
    for path in sorted(RAW.glob("cpu*.raw")):
        pages = path.read_bytes()
        starts, times = ringbuf.walk(pages, layout())
        ref_s, ref_t = [], []
        for p in range(len(pages) // 4096):
            s, t = ringbuf.walk_page(pages[p * 4096:(p + 1) * 4096], layout())
            ref_s += [x + p * 4096 for x in s]
            ref_t += t
        assert list(starts) == ref_s and list(times) == ref_t and ref_s


def test_every_entry_kind_of_a_hand_built_page():
    """Entries the recorded pages lack (ring_buffer.c): an event with its length in the
    next word (type_len 0), padding that is not the page's end, a time extend."""
    words = np.zeros(1024, "<u4")
    words[0], words[2] = 1000, 13 * 4                 # page time stamp; commit: 13 words
    entries = [(5 << 5) | 2, 0, 0,                    # event, 8 bytes of data
               (7 << 5) | 0, 12, 0, 0,                # event, length 12 in the next word
               (3 << 5) | 30, 1,                      # time extend: 1 << 27 | 3
               (9 << 5) | 29, 4,                      # padding of 8 bytes (time ignored)
               (2 << 5) | 1, 0]                       # event, 4 bytes
    words[4:4 + len(entries)] = entries
    page = words.tobytes()
    expect = ([20, 36, 64], [1005, 1012, 1012 + (1 << 27 | 3) + 2])
    assert ringbuf.walk_page(page, layout()) == expect
    starts, times = ringbuf.walk(page, layout())
    assert (list(starts), list(times)) == expect
