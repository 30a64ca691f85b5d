"""The XSR test end to end on a 4Kn emulated SSD (profile 4kn: 4096-byte sectors) at
--time-scale 0.0015 (groups of 43, 32 and 43 s; 2 s intervals): three groups back to back,
TP/ART/MRT per interval, the SEQ -> RND fall and the RND -> SEQ recovery with a recovery
time, the report's pages. About 2.5 min."""

import json
import math

import pytest

from pts.emulate.power_model import model_for
from tests.support import headers, power_checks
from tests.support.engine import IO_URING_ARGS, check_io_uring
from tests.support.ptsrun import run_pts

pytestmark = [pytest.mark.slow,
              pytest.mark.needs("root", "fio", "losetup", "blkdiscard", "pdftotext",
                                "fusermount3", "/dev/fuse", "mfusepy")]     # the emulated SSD


@pytest.fixture(scope="module")
def xsr(tmp_path_factory):
    reports = tmp_path_factory.mktemp("xsr") / "reports"
    return run_pts("emulated:64M:4kn", reports, "-k", "xsr", "--point-seconds", "2",
                   "--time-scale", "0.0015", "--host-ceiling", "auto", "--power", "emulated",
                   *IO_URING_ARGS, timeout=400)


def test_xsr_three_groups_with_intervals(xsr):
    assert xsr.proc.returncode == 0, xsr.proc.stdout
    assert xsr.run_json["device"]["logical_sector"] == 4096      # 4Kn (issue 23 §4)
    groups = xsr.of_type("xsr_group")
    assert [(g["group"], g["pattern"], g["block_size"], g["seconds"]) for g in groups] == [
        (1, "seq", 1 << 20, 43), (2, "rnd", 8192, 32), (3, "seq", 1 << 20, 43)]
    ivs = xsr.of_type("xsr_interval")
    for g in groups:
        mine = [i for i in ivs if i["group"] == g["group"]]
        assert len(mine) == g["intervals"] >= 10
        assert all(i["tp_mbps"] > 0 and i["lat_mean_us"] and i["clat_max_us"] for i in mine)
    starts = [i["start_s"] for i in ivs]
    assert starts == sorted(starts)
    assert "wipc" not in [r["type"] for r in xsr.records]


def test_xsr_falls_to_rnd_and_recovers_to_seq(xsr):
    g1, g2, g3 = xsr.of_type("xsr_group")
    print(f"XSR emulated: final TP {g1['final_level_mbps']:.1f} -> {g2['final_level_mbps']:.1f}"
          f" -> {g3['final_level_mbps']:.1f} MB/s; recovery {g2['recovery_s']} s, "
          f"{g3['recovery_s']} s")
    # Final levels are means over each group's last quarter of 2 s intervals (4-6 of
    # them), not one interval. Seen under load (CI's QEMU guest booting and two CPU hogs):
    # 19.9 -> 4.7 -> 19.2 MB/s, a fall to 0.24x and a rise of 4.1x against the bounds' 0.6x
    # and 1.5x (single RND intervals ranged 3.7-5.6 MB/s, after the first at 9.6).
    assert g2["final_level_mbps"] < 0.6 * g1["final_level_mbps"]      # SEQ -> RND fall
    assert g3["final_level_mbps"] > 1.5 * g2["final_level_mbps"]      # RND -> SEQ back
    assert any(g["recovered"] and g["recovery_s"] is not None for g in (g2, g3))


def test_xsr_recovery_is_what_its_intervals_give(xsr):
    """Each group's final level, recovered flag and recovery time, recomputed here from its
    stored intervals and the rule the run's test_start declares (final level = mean TP of the
    last ceil(n x fraction) intervals; recovered at the first of `sustain` consecutive
    intervals within `band` % of it; the time is that interval's start from the switch)."""
    (start,) = xsr.of_type("test_start", "xsr")
    p = start["parameters"]
    band, sustain, frac = (p["recovery_band_pct"], p["recovery_sustain_intervals"],
                           p["final_level_fraction"])
    ivs = xsr.of_type("xsr_interval")
    for g in xsr.of_type("xsr_group"):
        mine = [i for i in ivs if i["group"] == g["group"]]
        tps = [i["tp_mbps"] for i in mine]
        tail = tps[-math.ceil(len(tps) * frac):]
        level = sum(tail) / len(tail)
        assert g["final_level_mbps"] == pytest.approx(level, rel=1e-9), g
        if g["group"] == 1:                              # no switch before the first group
            assert g["recovered"] is None and g["recovery_s"] is None
            continue
        inside = [abs(t - level) <= level * band / 100 for t in tps]
        first = next((k for k in range(len(tps) - sustain + 1)
                      if all(inside[k:k + sustain])), None)
        assert g["recovered"] is (first is not None), g
        step = mine[0]["end_s"] - mine[0]["start_s"]
        assert g["recovery_s"] == (None if first is None else pytest.approx(first * step)), g


def test_xsr_report_pages(xsr):
    text = xsr.pdf_text()
    assert "Cross Stimulus Recovery" in text
    assert "Recovery time" in text and "within" in text


def test_report_headers_state_what_ran(xsr):
    """Every header block equals the run's data (tests/support/headers.py)."""
    bad, seen = headers.mismatches(xsr.folder / "report.pdf", xsr.folder)
    assert not bad, "\n".join(bad)
    assert set(seen) == {"xsr"} and seen["xsr"] >= 3


def test_every_fio_run_used_io_uring(xsr):
    """`--ioengine io_uring` (issue 33 §2): every job file and fio JSON of the run."""
    check_io_uring(xsr)


def test_host_ceiling_runs_the_groups_patterns_and_judges_each_group(xsr):
    """Issue 33 §1 for XSR: before the purge, one ceiling job per access pattern of its groups
    (SEQ 1024 KiB and RND 8 KiB writes at the test's TC x QD), each figure fio's own; every
    group's whole-run figure judged against it: this emulated SSD, far below what the host
    drives (its figures under 80 % of both the IOPS and the MB/s ceiling), has none marked."""
    (c,) = xsr.of_type("host_ceiling")
    assert c["error"] is None and c["device"] in ("tmpfs loop", "null_blk"), c
    kinds = [r["type"] for r in xsr.records]
    assert kinds.index("host_ceiling") < kinds.index("purge")
    p = xsr.of_type("test_start")[0]["parameters"]
    oio = p["thread_count"] * p["queue_depth"]
    assert [(j["label"], j["rw"], j["block_size"], j["numjobs"] * j["iodepth"])
            for j in c["points"]] == [("SEQ 1024KiB W", "write", 1 << 20, oio),
                                      ("RND 8KiB W", "randwrite", 8192, oio)]
    for j in c["points"]:
        job = json.loads((xsr.folder / j["raw"]).read_text())["jobs"][0]
        assert j["iops"] == pytest.approx(job["write"]["iops"], rel=1e-9)
        assert j["mbps"] == pytest.approx(job["write"]["bw_bytes"] / 1e6, rel=1e-9)
    large, small = c["points"]
    # Seen under load (CI's QEMU guest booting and two CPU hogs): ceiling (tmpfs loop) 1091
    # IOPS / 1144 MB/s SEQ 1 MiB, 73054 IOPS RND 8 KiB; the groups at most 1.8 % of the MB/s
    # ceiling and 0.8 % of the IOPS one: 0.8 holds with a factor of 40 to spare.
    for g in xsr.of_type("xsr_group"):
        assert "host_bound" in g and g["host_bound"] is None, g
        w = json.loads((xsr.folder / g["raw"]).read_text())["jobs"][0]["write"]
        assert w["iops"] < 0.8 * small["iops"] and w["bw_bytes"] / 1e6 < 0.8 * large["mbps"]


def test_each_access_group_has_its_power_window(xsr):
    """--power emulated (issue 51 §3): each group's fio run read at its edges, covered whole,
    drawing more than idle; the groups' energy no more than the power model's truth from the
    purge to the test's end over their span (the time between groups, idle and its GC, not
    in a group's window) and no less than idle over their seconds; the Power page."""
    groups = power_checks.phases(xsr, "group")
    assert sorted(groups) == [g["group"] for g in xsr.of_type("xsr_group")] == [1, 2, 3]
    model = model_for("4kn")
    counters = {c["when"]: c["counters"] for c in xsr.of_type("device_counters")}
    first, last = groups[1], groups[3]
    truth = power_checks.truth_j(model, counters["after purge"], counters["test end"],
                                 last["end"] - first["start"])
    total = sum(g["energy_j"] for g in groups.values())
    print(f"XSR emulated: groups {total:.3f} J, the model's over their span {truth:.3f} J")
    assert model.idle_w * sum(g["end"] - g["start"] for g in groups.values()) < total \
        <= truth * 1.01
    assert all(power_checks.coverage(g) > 0.999 and g["mean_w"] > model.idle_w
               for g in groups.values())
    assert groups[1]["end"] <= groups[2]["start"] and groups[2]["end"] <= groups[3]["start"]
    text = " ".join(xsr.pdf_text().split())
    assert "Power: per phase" in text and "group" in text
