"""Every refusal of an Applied Test Workload file, as a run loads it (--workload:
pts.session.options.with_workload -> pts.workload.atw.load), says whole what is wrong and how
to put it right: the file, the key, the value found, what is accepted (or the fix), and where
the format is documented; and that documentation (docs/workload.md) shows every key the loader
knows. Issue 47 §3: the refusals were checked by their key only (tests/workload/test_atw.py),
so a message that lost its reason or its fix passed."""

from __future__ import annotations

import re

import pytest

from pts.workload import atw
from tests.support.helpers import REPO
from tests.support.rwsw import atw_text, settings_with

GOOD = atw_text("hand", (("RND", "R", "4KiB", 70.0), ("SEQ", "W", 131072, 30.0)),
                queue_depth=4) + """
[[step]]
start_s = 0.0
seconds = 5.0
oio = 3
shares = { "RND 4K R" = 50.0, "SEQ 128K W" = 50.0 }
"""
DOC = "(format: docs/workload.md)"
STEP_SHARES = 'shares = { "RND 4K R" = 50.0, "SEQ 128K W" = 50.0 }'

# (what is changed in GOOD, to what, the message after "FILE: ")
REFUSALS = [
    ('name = "hand"', 'name = "hand"\ncolour = "red"', "workload.colour: unknown key (known: "
     "format, name, queue_depth, thread_count, version)"),
    ('share_pct = 70.0', 'share_pct = 70.0\nweight = 1', "stream[0].weight: unknown key "
     "(known: access, direction, share_pct, size)"),
    ("oio = 3", "oio = 3\nspeed = 1", "step[0].speed: unknown key (known: iops, oio, "
     "rt_mean_ms, seconds, shares, start_s)"),
    ('[[step]]', '[extra]\nx = 1\n\n[[step]]', "extra: unknown key (known: provenance, step, "
     "stream, workload)"),
    ('version = 1', 'version = 2', 'workload.format: must be format = "snia-pts-atw", '
     'version = 1'),
    ('format = "snia-pts-atw"', 'format = "fio"', 'workload.format: must be format = '
     '"snia-pts-atw", version = 1'),
    ("thread_count = 2", "thread_count = 0", "workload.thread_count: must be a whole number "
     ">= 1, not 0"),
    ("queue_depth = 4", "queue_depth = 2.5", "workload.queue_depth: must be a whole number "
     ">= 1, not 2.5"),
    ('share_pct = 70.0', 'share_pct = 60.0', "[[stream]] share_pct: the shares sum to 90, not "
     "100 (within 0.1): normalise them"),
    ('access = "RND"', 'access = "RANDOM"', "stream[0].access: must be one of ('RND', 'SEQ'), "
     "not 'RANDOM'"),
    ('direction = "R"', 'direction = "X"', "stream[0].direction: must be one of ('R', 'W'), "
     "not 'X'"),
    ('size = "4KiB"', 'size = "4 kilobytes"', 'stream[0].size: must be a size like "4KiB" or '
     "bytes, not '4 kilobytes'"),
    ('size = 131072', 'size = -1', 'stream[1].size: must be a size like "4KiB" or bytes, '
     "not -1"),
    ('share_pct = 70.0', 'share_pct = 0', "stream[0].share_pct: must be a percentage in "
     "(0, 100], not 0"),
    # The fix here is only the format's documentation: the message does not say "list it
    # once" or "merge the two". It is pts/workload/atw.py's text, another helper's area in
    # issue 47's session: left as found and reported, asserted as it is.
    ('access = "SEQ"\ndirection = "W"\nsize = 131072',
     'access = "RND"\ndirection = "R"\nsize = "4KiB"', "stream[1]: RND 4K R is listed twice"),
    ("start_s = 0.0", "start_s = -1", "step[0].start_s: must be a number of seconds, not -1"),
    ("seconds = 5.0", "seconds = 0", "step[0].seconds: must be a number of seconds > 0, not 0"),
    ("oio = 3", "oio = 0", "step[0].oio: must be a whole number >= 1, not 0"),
    (STEP_SHARES, "shares = 3", "step[0].shares: must be a table of stream label -> %"),
    (STEP_SHARES, "shares = {}", "step[0].shares: must be a table of stream label -> %"),
    (STEP_SHARES, 'shares = { "RND 4K Q" = 100.0 }', "step[0].shares: 'RND 4K Q' is not a "
     "stream label like 'RND 4K W'"),
    ('"SEQ 128K W" = 50.0', '"SEQ 64K W" = 50.0', "step[0].shares: SEQ 64K W is not one of "
     "the [[stream]] tables"),
    ('"SEQ 128K W" = 50.0', '"SEQ 128K W" = 40.0', "step[0].shares: the shares sum to 90, "
     "not 100 (within 0.1): normalise them"),
    ('"SEQ 128K W" = 50.0', '"SEQ 128K W" = -50.0', "step[0].shares.SEQ 128K W: must be a "
     "percentage in (0, 100], not -50.0"),
    ("[workload]", "provenance = 3\n[workload]", "[provenance]: must be a table"),
]


def refusal(tmp_path, text: str) -> str:
    with pytest.raises(atw.WorkloadError) as err:
        settings_with(tmp_path, text)
    return str(err.value)


@pytest.mark.parametrize("old, new, says", REFUSALS, ids=[r[2].split(":")[0] + f"-{i}"
                                                         for i, r in enumerate(REFUSALS)])
def test_every_refusal_says_the_problem_and_the_fix(tmp_path, old, new, says):
    assert old in GOOD
    assert refusal(tmp_path, GOOD.replace(old, new, 1)) == f"{tmp_path / 'w.toml'}: {says} {DOC}"


def test_a_file_without_a_table_it_needs_is_refused_saying_which(tmp_path):
    path = tmp_path / "w.toml"
    assert refusal(tmp_path, "") == (f"{path}: [workload]: missing: a workload file starts "
                                     f"with a [workload] table {DOC}")
    head = GOOD.split("[[stream]]")[0]
    assert refusal(tmp_path, head) == (f"{path}: [[stream]]: no streams: a workload needs at "
                                       f"least one [[stream]] table {DOC}")


def test_an_unreadable_or_corrupt_file_is_refused_saying_so(tmp_path):
    path = tmp_path / "w.toml"
    said = refusal(tmp_path, GOOD[:GOOD.index("snia-pts-atw")])     # cut inside a string
    assert said.startswith(f"{path}: not valid TOML (") and said.endswith(
        "); a truncated or corrupt workload file"), said
    path.unlink()
    assert refusal(tmp_path, None) == (
        f"{path}: cannot read the workload file (No such file or directory); make one with "
        "`python -m pts workload CAPTURE -o FILE`")


def documented_keys() -> dict[str, set[str]]:
    """The keys of each table in docs/workload.md's example ATW file."""
    text = (REPO / "docs" / "workload.md").read_text()
    block = re.search(r"## The ATW file format.*?```toml\n(.*?)```", text, re.S)
    assert block, "docs/workload.md: no ```toml block under '## The ATW file format'"
    out: dict[str, set[str]] = {}
    table = ""
    for line in block.group(1).splitlines():
        if m := re.match(r"\[\[?(\w+)\]\]?", line):
            table = m[1]
            out.setdefault("", set()).add(table)
        elif m := re.match(r"(\w+) = ", line):
            out.setdefault(table, set()).add(m[1])
    return out


def test_the_format_the_refusals_point_to_shows_every_key_the_loader_knows(tmp_path):
    """What "unknown key (known: ...)" lists, per table, is in the documentation's example
    file, which the refusals name as the fix."""
    doc = documented_keys()
    for old, new, table in (('[[step]]', '[x]\n\n[[step]]', ""),
                            ('name = "hand"', 'name = "hand"\nx = 1', "workload"),
                            ('share_pct = 70.0', 'share_pct = 70.0\nx = 1', "stream"),
                            ("oio = 3", "oio = 3\nx = 1", "step")):
        said = refusal(tmp_path, GOOD.replace(old, new, 1))
        known = set(re.search(r"\(known: ([^)]*)\)", said)[1].split(", "))
        assert known == doc[table], (table, known, doc.get(table))
