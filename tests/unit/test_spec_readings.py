"""The spec's readings (pts/config/spec_readings.py, issue 21 §2): every value the digest does
not confirm says in the spec file where it comes from; the loader refuses a file that leaves
one out or names a key, status or field it does not know; the frozen spec exposes it."""

import re
import tomllib

import pytest

from pts.config import spec_readings
from pts.config.spec import SpecError, available_specs, load_rwsw, load_spec, specs_dir
from pts.config.spec_recovery import HirTest
from tests.support.helpers import REPO

SHIPPED = REPO / "specs" / "pts-2.0.2-enterprise.toml"
SPECS = ("pts-2.0.2-enterprise", "pts-2.0.2-client", "pts-e-1.1")


@pytest.mark.parametrize("name", SPECS)
def test_every_required_value_of_every_shipped_spec_is_declared(name):
    spec = load_spec(name)
    names = {p.name for p in spec.readings}
    data = tomllib.loads(spec.path.read_text())
    for section in ("hir", "xsr", "dirth", "cbw", "purge_probe"):
        assert {f"{section}.{k}" for k in data[section] if k != "clause"} <= names, section
    assert {"wsat.max_hours", "common.thread_count", "common.queue_depth",
            "throughput.thread_count", "throughput.queue_depth"} <= names
    for p in spec.readings:
        assert p.status in ("confirmed", "reading", "choice") and p.where.strip()
        assert p.value == data[p.section][p.key]


def test_the_frozen_spec_exposes_each_values_reading():
    e, e11 = load_spec("pts-2.0.2-enterprise"), load_spec("pts-e-1.1")
    align = e.reading_of("cbw.block_align")
    assert (align.status, align.value) == ("reading", "4KiB")
    assert "jesd219.fio" in align.where and align.alternatives == (
        "bs: fio's default, 512 B under the mix (S5)",)
    assert e.reading_of("wsat.max_hours").status == "reading"       # 2.0.2 split unknown
    assert e11.reading_of("wsat.max_hours").status == "confirmed"   # PTS-E 1.0's rule
    assert e11.reading_of("wsat.max_hours").where.startswith("PTS-E 1.0")
    assert e.reading_of("common.thread_count").status == "confirmed"
    assert e11.reading_of("common.thread_count").status == "reading"
    assert e.reading_of("purge_probe.seconds").status == "choice"
    assert e.reading_of("iops.rw_mixes") is None       # confirmed spec text, no entry
    assert e.reading_of("hir.idle_seconds").value == [5, 10, 15, 25, 50]


def test_readings_for_a_test_are_those_of_its_sections():
    e = load_spec("pts-2.0.2-enterprise")
    cbw = e.readings_for("cbw-precondition")
    assert cbw == e.readings_for("cbw")
    assert {r["key"].split(".")[0] for r in cbw} == {"cbw"}
    assert {r["key"] for r in cbw} == {f"cbw.{k}" for k in (
        "rw_mix", "block_size_mix", "access_zones", "thread_counts", "queue_depths",
        "tracking_thread_count", "tracking_queue_depth", "precondition_round_seconds",
        "prewrite_seconds", "operating_prewrite_seconds", "capture_seconds",
        "art_ceiling_us", "percentiles", "block_align", "precondition_sample",
        "midiops_candidates")}
    assert {r["key"] for r in e.readings_for("wsat")} == {
        "wsat.max_hours", "purge_probe.seconds", "purge_probe.block_size",
        "purge_probe.fob_ss_min_ratio"}
    # IOPS under 2.0.2: its TC/QD recommendation is confirmed: only the probe's choices.
    assert {r["status"] for r in e.readings_for("iops")} == {"choice"}
    assert {r["key"] for r in load_spec("pts-e-1.1").readings_for("iops")
            if r["status"] == "reading"} == {"common.thread_count", "common.queue_depth"}
    rec = next(r for r in e.readings_for("hir") if r["key"] == "hir.wait_state_naming")
    assert rec == {"key": "hir.wait_state_naming", "value": "idle_over_write",
                   "status": "reading", "source": e.reading_of(
                       "hir.wait_state_naming").where,
                   "alternatives": ["ordinal: WS1..WS5, S4's plot legend only"]}


def variant(tmp_path, old, new):
    text = SHIPPED.read_text()
    assert old in text, old
    path = tmp_path / "variant.toml"
    path.write_text(text.replace(old, new, 1))
    return path


IDLE = 'idle_seconds = { status = "reading", source = "5/10/15/25/50 s host idle: '


@pytest.mark.parametrize("old,new,needles", [
    # a required value without provenance: names the key and the line to add
    (IDLE, "# " + IDLE, ["[hir.idle_seconds]: has no provenance",
                         "add under [provenance.hir] the line idle_seconds = "]),
    ('max_hours = { status = "reading"', 'max_hourz = { status = "reading"',
     ["[provenance.wsat.max_hourz]: [wsat] has no key 'max_hourz'", "remove this line"]),
    (IDLE, IDLE.replace('"reading"', '"guess"'),
     ["[provenance.hir.idle_seconds]: unknown status 'guess'", "confirmed, reading, choice"]),
    (IDLE, IDLE.replace('status = "reading"', 'status = "confirmed"'),
     ["[provenance.hir.idle_seconds]: unknown field 'source' for status 'confirmed'"]),
    (IDLE, IDLE.replace('source = "', 'sauce = "'),
     ["[provenance.hir.idle_seconds]: unknown field 'sauce'"]),
    ("[provenance.hir]", "[provenance.hirr]",
     ["[provenance.hirr]: the spec file has no [hirr] table"]),
    ('wait_state_naming = "idle_over_write"', 'wait_state_naming = "by_minutes"',
     ["[hir.wait_state_naming]: 'by_minutes' is out of range (one of idle_over_write, "
      "ordinal)"]),
    ('block_align = "4KiB"', 'block_align = "4k"', ["[cbw.block_align[0]]"]),
])
def test_bad_readings_fail_at_load_naming_file_table_and_key(tmp_path, old, new, needles):
    path = variant(tmp_path, old, new)
    with pytest.raises(SpecError) as err:
        load_spec(str(path))
    assert str(path) in str(err.value)
    for needle in needles:
        assert needle in str(err.value)


def test_a_confirmed_value_needs_its_clause(tmp_path):
    path = variant(tmp_path, IDLE, 'idle_seconds = { status = "confirmed" } # ')
    with pytest.raises(SpecError, match=re.escape(
            "[provenance.hir.idle_seconds]: status 'confirmed' needs clause")):
        load_spec(str(path))


def test_reading_for_a_new_key_is_one_line(tmp_path):
    """A value another change adds (e.g. an alternative reading) is declared by one line:
    the mechanism needs no code per key. Shown with an existing key moved to confirmed."""
    path = variant(tmp_path, IDLE, 'idle_seconds = { status = "confirmed", clause = "X 1" }'
                                   ' # ')
    spec = load_spec(str(path))
    assert spec.reading_of("hir.idle_seconds").where == "X 1"
    assert all(r["key"] != "hir.idle_seconds" for r in spec.readings_for("hir"))


def test_wait_state_names_follow_the_declared_reading():
    h = load_spec("pts-2.0.2-enterprise").hir
    assert h.wait_state_naming == "idle_over_write"
    assert h.state_names() == ("WS1", "WS2", "WS3", "WS5", "WS10")
    ordinal = HirTest(**{**h.__dict__, "wait_state_naming": "ordinal"})
    assert ordinal.state_names() == ("WS1", "WS2", "WS3", "WS4", "WS5")


def test_required_table_lists_only_known_sections():
    # The loader's list of sections needing provenance names tables the spec files have.
    spec = load_spec("pts-2.0.2-enterprise")
    for section in spec_readings.REQUIRED:
        assert hasattr(spec, section) or section in spec.rwsw.sections, section
    assert set(available_specs()) >= set(SPECS)


def test_rwsw_values_all_need_provenance(tmp_path):
    # RWSW's body text was not available (rwsw-digest §0): every value is a reading.
    text = (specs_dir() / "rwsw-1.0.7.toml").read_text()
    assert all(r["status"] != "confirmed"
               for r in load_spec("pts-2.0.2-enterprise").readings_for("rwsw-wsat"))
    path = tmp_path / "rwsw-x.toml"
    path.write_text(text.replace("top_n = { status", "topn_gone = { status"))
    with pytest.raises(SpecError, match=r"\[provenance.rwsw_atw.topn_gone\]"):
        load_rwsw(str(path))
    path.write_text("\n".join(line for line in text.splitlines()
                              if not line.startswith("top_n = {")))
    with pytest.raises(SpecError, match=r"rwsw_atw.top_n\]: has no provenance"):
        load_rwsw(str(path))
    with pytest.raises(SpecError, match="an RWSW spec file"):
        load_spec(str(specs_dir() / "rwsw-1.0.7.toml"))
