"""The ATW loader refuses every bad file naming the file and the key; dumps round trips."""

from __future__ import annotations

import pytest

from pts.workload import atw
from pts.workload.atw import Step, Stream, StreamKey, Workload
from tests.support.rwsw import atw_text

GOOD = atw_text("hand", (("RND", "R", "4KiB", 70.0), ("SEQ", "W", 131072, 30.0)),
                queue_depth=4) + """
[[step]]
start_s = 0.0
seconds = 5.0
oio = 3
shares = { "RND 4K R" = 50.0, "SEQ 128K W" = 50.0 }
"""


def load(tmp_path, text):
    path = tmp_path / "w.toml"
    path.write_text(text)
    return atw.load(path)


def test_a_hand_written_file_loads(tmp_path):
    w = load(tmp_path, GOOD)
    assert [(s.key.label, s.share_pct) for s in w.streams] == [("RND 4K R", 70.0),
                                                               ("SEQ 128K W", 30.0)]
    assert w.oio == 8 and w.steps[0].oio == 3 and len(w.sha256) == 64


@pytest.mark.parametrize("old, new, key", [
    ('name = "hand"', 'name = "hand"\ncolour = "red"', "workload.colour"),
    ('share_pct = 70.0', 'share_pct = 70.0\nweight = 1', "stream[0].weight"),
    ('share_pct = 70.0', 'share_pct = 60.0', "[[stream]] share_pct"),
    ('access = "SEQ"\ndirection = "W"\nsize = 131072',
     'access = "RND"\ndirection = "R"\nsize = "4KiB"', "stream[1]"),
    ('size = "4KiB"', 'size = "4 kilobytes"', "stream[0].size"),
    ('size = 131072', 'size = -1', "stream[1].size"),
    ('access = "RND"', 'access = "RANDOM"', "stream[0].access"),
    ('share_pct = 70.0', 'share_pct = 0', "stream[0].share_pct"),
    ('"SEQ 128K W" = 50.0', '"SEQ 64K W" = 50.0', "step[0].shares"),
    ('"SEQ 128K W" = 50.0', '"SEQ 128K W" = 40.0', "step[0].shares"),
    ('"SEQ 128K W" = 50.0', '"SEQ 128K W" = -50.0', "step[0].shares.SEQ 128K W"),
    ("oio = 3", "oio = 0", "step[0].oio"),
    ("thread_count = 2", "thread_count = 0", "workload.thread_count"),
    ('version = 1', 'version = 2', "workload.format"),
    ('[[step]]', '[extra]\nx = 1\n\n[[step]]', "extra"),
])
def test_every_refusal_names_the_file_and_the_key(tmp_path, old, new, key):
    assert old in GOOD
    with pytest.raises(atw.WorkloadError) as err:
        load(tmp_path, GOOD.replace(old, new, 1))
    assert str(tmp_path / "w.toml") in str(err.value)
    assert f": {key}:" in str(err.value)


def test_zero_streams_refused(tmp_path):
    head = GOOD.split("[[stream]]")[0]
    with pytest.raises(atw.WorkloadError, match=r"w\.toml: \[\[stream\]\]: no streams"):
        load(tmp_path, head)


@pytest.mark.parametrize("cut", [60, 200, len(GOOD) - 12])
def test_truncated_or_corrupt_toml_refused(tmp_path, cut):
    with pytest.raises(atw.WorkloadError, match=r"w\.toml: "):
        load(tmp_path, GOOD[:cut])


def test_binary_garbage_and_a_missing_file_refused(tmp_path):
    path = tmp_path / "w.toml"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(atw.WorkloadError, match="not valid TOML"):
        atw.load(path)
    with pytest.raises(atw.WorkloadError, match="missing.toml: cannot read"):
        atw.load(tmp_path / "missing.toml")


def test_dumps_round_trips(tmp_path):
    k1, k2 = StreamKey("RND", "R", 512), StreamKey("SEQ", "W", 1 << 20)
    w = Workload('q"uote', (Stream(k1, 66.67), Stream(k2, 33.33)), 4, 8,
                 (Step(1.5, 2.0, 6, {k1: 100.0}, 1520.0, 0.41), Step(3.5, 2.0, 1, {k2: 100.0})),
                 {"capture_sha256": "ab", "lost_events": 0, "coverage_pct": 97.5,
                  "flag": True})
    back = load(tmp_path, atw.dumps(w))
    assert (back.name, back.streams, back.thread_count, back.queue_depth, back.steps,
            back.provenance) == (w.name, w.streams, w.thread_count, w.queue_depth, w.steps,
                                 w.provenance)
