"""DIRTH and CBW end to end, as a user runs them: `pytest pts/ -k "dirth or cbw"` on an
emulated 4Kn SSD (256 MiB, profile '4kn': 4096-byte logical sectors, so CBW's sub-4 KiB
sizes are N/A, left out of every fio job and declared; issue 23 §4) with a reduced grid
(TC 32,1 x QD 32,4,1: the tracking point TC32/QD32 and MinIOPS TC1/QD1 kept), 1 s points,
5 rounds and --time-scale 0.001 (pre-writes 1-4 s, captures 1 s), all declared. Checks the
ledger (both phases, pre-writes before every round, operating points, histograms with
their I/O counts), the fio job files (CBW's bssplit and zoned distribution) and the
report's pages. And the --dry-run plan of both on a 4Kn loop device: CBW's sub-4 KiB sizes
left out and declared."""

import json
import re

import pytest

from pts.config.spec import load_spec
from tests.support import headers
from tests.support.engine import IO_URING_ARGS, check_io_uring
from tests.support.ptsrun import check_outcomes, fio_job, run_pts, run_suite

pytestmark = pytest.mark.needs("root", "fio", "pdftotext", "losetup", "fusermount3", "/dev/fuse",
                              "mfusepy")     # the emulated SSD

# 6 points a round (TC 2 left out of the run to keep CI time down; the dry run keeps it)
GRID = ("--dirth-thread-counts", "32,1", "--dirth-queue-depths", "32,4,1")
DRY_GRID = ("--dirth-thread-counts", "32,2,1", "--dirth-queue-depths", "32,4,1")


def words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.fixture(scope="module")
def qos_run(tmp_path_factory):
    reports = tmp_path_factory.mktemp("dirth_cbw") / "reports"
    return run_pts("emulated:256M:4kn", reports, "-k", "dirth or cbw", "--point-seconds", "1",
                   "--max-rounds", "5", "--time-scale", "0.001", *GRID, *IO_URING_ARGS,
                   timeout=600)


def fio_sections(text: str) -> int:
    """The job sections of a fio job file (its [global] section not counted)."""
    return text.count("\n[") - text.count("\n[global]")


def window_means(run, test):
    end = next(r for r in run.of_type("test_end", test))
    first, last = end["window"]
    acc = {}
    for p in run.of_type("point", test):
        if first <= p["round"] <= last:
            acc.setdefault((p["thread_count"], p["queue_depth"]), []).append(p)
    return {k: {f: sum(p[f] for p in v) / len(v) for f in ("iops", "lat_mean_us")}
            for k, v in acc.items()}


def under_ceiling(run, kind) -> dict[tuple, dict]:
    """The grid points (TC, QD) whose window-mean ART is below the spec file's ceiling (the
    MaxIOPS and MidIOPS candidates), recomputed from the points; the ceiling read from
    specs/ with the spec loader, not from the run."""
    ceiling = getattr(load_spec("pts-2.0.2-enterprise"), kind).art_ceiling_us
    return {k: v for k, v in window_means(run, kind).items() if v["lat_mean_us"] < ceiling}


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["dirth", "cbw"])
def test_phases_prewrites_and_points(qos_run, kind):
    pre = f"{kind}-precondition"
    ends = {r["test"]: r for r in qos_run.of_type("test_end")}
    expected = check_outcomes(qos_run.folder, qos_run.records)   # both phases, from rounds
    assert {pre, kind} <= set(expected)
    assert 1 <= ends[pre]["rounds"] <= 5 and 1 <= ends[kind]["rounds"] <= 5
    assert qos_run.proc.returncode == (0 if all(e.passed for e in expected.values()) else 1)
    assert qos_run.of_type("purge", pre) and not qos_run.of_type("purge", kind)
    assert not qos_run.of_type("wipc", pre) and not qos_run.of_type("wipc", kind)
    writes = qos_run.of_type("prewrite", kind)
    rounds = ends[kind]["rounds"]
    assert [w["when"] for w in writes] == [f"before round {r}" for r in range(1, rounds + 1)] \
        + ["MaxIOPS", "MidIOPS", "MinIOPS"]
    assert all(w["bytes_written"] > 0 and w["thread_count"] == 32 for w in writes[:rounds])
    assert [w["seconds"] for w in writes[rounds:]] == [4, 4, 4]     # 3600 s x 0.001
    points = [p for p in qos_run.of_type("point", kind) if p["round"] == 1]
    assert [(p["thread_count"], p["queue_depth"]) for p in points] == [
        (tc, qd) for tc in (32, 1) for qd in (32, 4, 1)]
    for p in points:
        assert p["iops"] > 0 and p["ios"] > 0 and p["lat_99_9_us"] <= p["lat_max_us"]
    for p in qos_run.of_type("point", kind):      # every round's: fio's own figures
        job = fio_job(qos_run.folder, p)
        where = (p["round"], p["thread_count"], p["queue_depth"], p["raw"])
        opts = job["job options"]
        assert (opts["numjobs"], opts["iodepth"]) == (str(p["thread_count"]),
                                                      str(p["queue_depth"])), where
        assert (p["iops"], p["sys_cpu_pct"]) == pytest.approx(
            (job["read"]["iops"] + job["write"]["iops"], job["sys_cpu"]), rel=1e-9), where
    track = qos_run.of_type("round", kind)[0]["tracking"]
    assert list(track) == [f"RND {'8KiB 65/35' if kind == 'dirth' else 'JESD219-mix 40/60'} "
                           "TC32/QD32"]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["dirth", "cbw"])
def test_readings_used_are_stored_and_followed(qos_run, kind):
    """precondition_sample "first" (S5): each preconditioning round measures its point
    first, then writes the rest of the round, then its verdict; MidIOPS among the points
    under the ART ceiling (S5). Both are in the tests' stored parameters."""
    pre = f"{kind}-precondition"
    starts = {r["test"]: r["parameters"] for r in qos_run.of_type("test_start")}
    assert starts[pre]["precondition_sample"] == "first"
    assert starts[kind]["midiops_candidates"] == "under_ceiling"
    order = [(r["type"], r.get("round") or r.get("when")) for r in qos_run.records
             if r.get("test") == pre and r["type"] in ("prewrite", "point", "round")]
    rounds = len(qos_run.of_type("round", pre))
    assert rounds >= 1
    assert order == [x for n in range(1, rounds + 1) for x in (
        ("point", n), ("prewrite", f"precondition round {n}"), ("round", n))]
    assert all(w["seconds"] == 1 for w in qos_run.of_type("prewrite", pre))   # 2 s - 1 s
    ops = {o["name"]: o for o in qos_run.of_type("operating_point", kind)}
    # selected exactly when a point is under the ceiling, recomputed from the window means
    under = under_ceiling(qos_run, kind)
    print(f"{kind}: {len(under)} of the grid's points under the ART ceiling")
    assert ops["MidIOPS"]["selected"] == bool(under) == ops["MaxIOPS"]["selected"]
    if under:
        # the point under the ceiling nearest (Max + Min) / 2 of the window means, ties to
        # the smaller TC x QD, then the smaller TC
        means = window_means(qos_run, kind)
        target = (max(v["iops"] for v in under.values()) + means[(1, 1)]["iops"]) / 2
        want = min(under, key=lambda k: (abs(under[k]["iops"] - target), k[0] * k[1], k[0]))
        assert (ops["MidIOPS"]["thread_count"], ops["MidIOPS"]["queue_depth"]) == want
        assert ops["MidIOPS"]["iops"] == pytest.approx(under[want]["iops"])
        assert "among the points with ART below 5,000 µs" in ops["MidIOPS"]["rule"]
    else:
        assert ops["MidIOPS"]["rule"].startswith("no MaxIOPS: no point has an ART below")


# Little's law for a closed loop of TC x QD outstanding I/Os: IOPS x ART = TC x QD, less the
# time a thread spends between a completion and its next submission. Seen on this emulated
# SSD beside another run on 2 cores: 0.91-1.00 of TC x QD at every point of every round, while
# a point's IOPS moved 344-2,253 from round to round (TC 1 / QD 1): the grid's ART order
# (QD1 < QD4 < QD32) is not something 1 s points on a shared machine can promise, this is.
# A point run at another TC x QD than recorded misses it by a factor of 4 or more.
LITTLE = (0.6, 1.05)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["dirth", "cbw"])
def test_demand_intensity_points_hold_their_outstanding_ios(qos_run, kind):
    """Each point's demand is what it is recorded at: IOPS x ART = TC x QD (LITTLE), at every
    point of every round, from the ledger's figures (fio's own, test_phases_prewrites_and_points);
    so the Demand Intensity curve's x and y are the grid's demand and its measured answer."""
    points = qos_run.of_type("point", kind)
    assert len(points) == 6 * qos_run.of_type("test_end", kind)[0]["rounds"]
    means = window_means(qos_run, kind)
    for tc in (32, 1):
        print(f"{kind} TC{tc}: " + ", ".join(
            f"QD{qd} {means[(tc, qd)]['iops']:,.0f} IOPS ART {means[(tc, qd)]['lat_mean_us']:,.0f}"
            " µs" for qd in (1, 4, 32)))
    held = {(p["round"], p["thread_count"], p["queue_depth"]):
            p["iops"] * p["lat_mean_us"] / 1e6 / (p["thread_count"] * p["queue_depth"])
            for p in points}
    print(f"{kind}: IOPS x ART / (TC x QD) {min(held.values()):.3f}..{max(held.values()):.3f}")
    assert all(LITTLE[0] <= v <= LITTLE[1] for v in held.values()), held


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["dirth", "cbw"])
def test_operating_points_and_histograms(qos_run, kind):
    ops = {o["name"]: o for o in qos_run.of_type("operating_point", kind)}
    assert list(ops) == ["MaxIOPS", "MidIOPS", "MinIOPS"]
    assert (ops["MinIOPS"]["thread_count"], ops["MinIOPS"]["queue_depth"]) == (1, 1)
    means, under = window_means(qos_run, kind), under_ceiling(qos_run, kind)
    assert ops["MinIOPS"]["iops"] == pytest.approx(means[(1, 1)]["iops"])
    # selected exactly when a point is under the ceiling, recomputed from the window means
    assert ops["MaxIOPS"]["selected"] == bool(under)
    if under:
        # the highest window-mean IOPS under the ceiling, ties to the least demand
        want = min(under, key=lambda k: (-under[k]["iops"], k[0] * k[1], k[0]))
        assert (ops["MaxIOPS"]["thread_count"], ops["MaxIOPS"]["queue_depth"]) == want
        assert ops["MaxIOPS"]["iops"] == pytest.approx(under[want]["iops"])
    else:
        assert any("MaxIOPS not selected" in d["text"]
                   for d in qos_run.of_type("deviation", kind))
    hists = qos_run.of_type("response_histogram", kind)
    assert [h["name"] for h in hists] == [n for n, o in ops.items() if o["selected"]]
    for h in hists:
        assert sum(h["bins"].values()) == h["ios"] > 0 and h["seconds"] == 1
        rows = {r["pct"]: r for r in h["percentiles"]}
        assert set(rows) == {99.9, 99.99, 99.999, 99.9999}
        assert not rows[99.9999]["resolvable"] and rows[99.9999]["us"] is None   # < 1e6 I/Os
        assert rows[99.9999]["ios_needed"] == 1_000_000 and rows[99.9]["ios"] == h["ios"]
        raw = json.loads((qos_run.folder / h["raw"]).read_text())
        opts = raw["jobs"][0]["job options"]
        assert opts["numjobs"] == str(h["thread_count"]) and opts["iodepth"] == str(
            h["queue_depth"])


@pytest.mark.slow
def test_cbw_fio_jobs_have_bssplit_and_zones(qos_run):
    """On 4096-byte sectors the spec's sub-4 KiB sizes are left out of every CBW job and the
    rest keeps its proportions (the full mix on 512-byte sectors: tests/unit/test_dirth_cbw.py)."""
    assert qos_run.run_json["device"]["logical_sector"] == 4096
    job = (qos_run.folder / "raw" / "cbw" / "round-01" / "round.fio").read_text()
    assert "bssplit=4k/75:8k/11:16k/8:32k/3:64k/3\n" in job \
        and "random_distribution=zoned:50/5:30/15:20/80" in job and "rwmixread=40" in job
    jobs = sorted((qos_run.folder / "raw").glob("cbw*/**/*.fio"))
    assert len(jobs) >= 5
    for job in jobs:                     # every section of every job file CBW ran
        text = job.read_text()
        sections = fio_sections(text)
        assert sections >= 1 and re.findall(r"^bssplit=(.*)$", text, re.M) == [
            "4k/75:8k/11:16k/8:32k/3:64k/3"] * sections, job
    (start,) = qos_run.of_type("test_start", "cbw")
    assert start["parameters"]["dropped_block_sizes"] == [
        "0.5 KiB", "1 KiB", "1.5 KiB", "2 KiB", "2.5 KiB", "3 KiB", "3.5 KiB"]
    assert any("CBW: block sizes 0.5KiB:4%" in d["text"] and "N/A on this device" in d["text"]
               for d in qos_run.of_type("deviation", "cbw"))
    assert "N/A on this device" in words(qos_run.pdf_text())
    pre = (qos_run.folder / "raw" / "cbw" / "prewrite" / "MinIOPS.fio").read_text()
    assert "bssplit=" in pre and "rw=randwrite" in pre and "zoned:50/5" in pre
    dirth = (qos_run.folder / "raw" / "dirth" / "round-01" / "round.fio").read_text()
    assert "bssplit" not in dirth and "bs=8192" in dirth and "rwmixread=65" in dirth


@pytest.mark.slow
def test_cbw_fio_jobs_align_as_the_run_declares(qos_run):
    """Every fio job file CBW and DIRTH ran (preconditioning, pre-writes, rounds, captures)
    aligns its random offsets as the run's test_start declares (spec file block_align, a
    reading: CBW 4 KiB as fio's examples/jesd219.fio; DIRTH fio's default), and the report's
    Readings section lists it."""
    for kind, want in (("cbw", "blockalign=4096"), ("dirth", None)):
        declared = {s["parameters"]["block_align"] for s in qos_run.of_type("test_start")
                    if s["test"].split("-")[0] == kind}
        assert declared == ({4096} if want else {None})
        jobs = sorted((qos_run.folder / "raw").glob(f"{kind}*/**/*.fio"))
        assert len(jobs) >= 5 and any("prewrite" in str(j) for j in jobs)
        for job in jobs:
            text = job.read_text()
            sections = fio_sections(text)
            aligns = re.findall(r"^blockalign=.*$", text, re.M)
            if want:
                assert aligns == [want] * sections and sections >= 1, job
            else:
                assert aligns == [], job
    readings = [r for s in qos_run.of_type("test_start", "cbw")
                for r in s["parameters"]["readings"] if r["key"] == "cbw.block_align"]
    assert readings and readings[0]["value"] == "4KiB"
    text = words(qos_run.pdf_text())
    assert "Readings of the specification" in text and "cbw.block_align 4KiB" in text


@pytest.mark.slow
def test_report_pages(qos_run):
    text = words(qos_run.pdf_text())
    for kind in ("DIRTH", "CBW"):
        for page in ("Preconditioning — Steady State Convergence", "— Steady State Convergence",
                     "— Demand Variation Convergence: TC32, every QD",
                     "— Demand Variation: IOPS vs QD per TC", "— Demand Intensity: ART vs IOPS",
                     "— All Points", "— System CPU Utilisation (%)", "— Operating Points",
                     "— Response Time Histogram: MinIOPS (TC1/QD1)", "— Pre-writes"):
            assert f"{kind} {page}" in text, f"{kind} {page}"
    assert "not resolvable" in text
    assert "none in this phase: the drive was purged once, at the start of" in text
    assert "DIRTH/CBW demand-variation grid reduced to thread counts 32, 1" in text
    assert "scaled by 0.001 (--time-scale)" in text


@pytest.mark.slow
def test_report_headers_state_what_ran(qos_run):
    """Every header block of both phases equals the run's data (tests/support/headers.py): the
    reduced TC x QD grid as run, the purge and preconditioning of <kind>-precondition, CBW's
    mix and zones, the write cache."""
    bad, seen = headers.mismatches(qos_run.folder / "report.pdf", qos_run.folder)
    assert not bad, "\n".join(bad)
    assert set(seen) == {"dirth-precondition", "dirth", "cbw-precondition", "cbw"}


@pytest.mark.needs("losetup")
def test_dry_run_plans_on_a_4kn_device(make_loop, tmp_path):
    dev = make_loop(64 << 20, sector=4096)
    p = run_suite("--device", dev, "--dry-run", "-k", "dirth or cbw", "--purge", "trim",
                  *DRY_GRID, "--time-scale", "0.01")
    assert p.returncode == 0, p.stdout + p.stderr
    out = p.stdout
    assert "DIRTH test (PTS 2.0.2 Demand Intensity" in out and "CBW test (PTS 2.0.2" in out
    assert "bssplit=4k/75:8k/11:16k/8:32k/3:64k/3" in out
    assert "DEVIATION: CBW: block sizes 0.5KiB:4%" in out
    assert "random_distribution=zoned:50/5:30/15:20/80" in out
    assert out.count("estimated duration (without purge)") == 2
    assert "9 points (TC 32, 2, 1 x QD 32, 4, 1)" in out


def test_every_fio_run_used_io_uring(qos_run):
    """`--ioengine io_uring` (issue 33 §2): every job file and fio JSON of the run."""
    check_io_uring(qos_run)
