"""The Latency test end to end, as a user runs it: pytest pts/ -k latency on a real loop
device with 4096-byte sectors (so the 0.5 KiB cells are N/A), real fio at TC 1 / QD 1, 1 s
points and 5 rounds (declared). Checks the ledger (ART, 5 9s, MRT, IOPS per point, reads
and writes of mixed points), the 99.999 % against fio's own histogram in the raw output,
and the report's pages."""

import json

import pytest

from pts.tools import histogram
from tests.support.engine import IO_URING_ARGS, check_io_uring
from tests.support.helpers import loop_device
from tests.support.ptsrun import check_outcomes, fio_job, run_pts

pytestmark = [pytest.mark.slow,
              pytest.mark.needs("root", "fio", "losetup", "blkdiscard", "pdftotext")]

SIZE = 64 << 20
CELLS = [(m, b) for m in ("100/0", "65/35", "0/100") for b in (8192, 4096, 512)]


@pytest.fixture(scope="module")
def lat(tmp_path_factory):
    reports = tmp_path_factory.mktemp("lat") / "reports"
    with loop_device(SIZE, sector=4096) as dev:
        return run_pts(dev, reports, "-k", "latency", "--point-seconds", "1",
                       "--purge", "trim", "--max-rounds", "5", *IO_URING_ARGS)


def test_one_test_selected_and_outcome(lat):
    end = lat.of_type("test_end")[0]
    print(f"Latency integration: {lat.wall:.0f} s wall, {end['status']} after "
          f"{end['rounds']} rounds")
    assert [s["test"] for s in lat.of_type("test_start")] == ["latency"]
    expected = check_outcomes(lat.folder, lat.records)["latency"]
    assert lat.proc.returncode == (0 if expected.passed else 1), lat.proc.stdout
    assert ("1 passed" if expected.passed else "1 failed") in lat.proc.stdout


def test_wipc_and_points_at_tc1_qd1(lat):
    params = lat.of_type("test_start")[0]["parameters"]
    assert (params["thread_count"], params["queue_depth"], params["percentile"]) == (1, 1,
                                                                                     99.999)
    wipc = lat.of_type("wipc")[0]
    assert (wipc["thread_count"], wipc["queue_depth"], wipc["block_size"]) == (1, 1, 131072)
    assert wipc["bytes_written"] == 2 * SIZE
    points = [p for p in lat.of_type("point") if p["round"] == 1]
    assert [(p["rw_mix"], p["block_size"]) for p in points] == CELLS
    for p in points:
        if p["block_size"] == 512:
            assert p["na"] and "smaller than the logical sector size" in p["reason"]
            continue
        opts = json.loads((lat.folder / p["raw"]).read_text())["jobs"][0]["job options"]
        assert (opts["iodepth"], opts["numjobs"], opts["lat_percentiles"]) == ("1", "1", "1")


def measured(lat) -> list[dict]:
    """The points that ran (not N/A); never none."""
    points = [p for p in lat.of_type("point") if not p["na"]]
    assert points
    return points


def test_response_times_per_point_and_direction(lat):
    for p in measured(lat):
        assert 0 < p["lat_mean_us"] <= p["lat_max_us"]
        assert 0 < p["lat_percentile_us"] <= p["lat_max_us"] and p["iops"] > 0
        for d in ("read", "write"):
            busy = p["read_pct"] > 0 if d == "read" else p["read_pct"] < 100
            assert (p[f"{d}_lat_mean_us"] is not None) == busy, (p["rw_mix"], d)
        if p["rw_mix"] == "65/35":
            assert p["read_ios"] > 0 and p["write_ios"] > 0
            assert p["lat_max_us"] == max(p["read_lat_max_us"], p["write_lat_max_us"])


def test_percentile_is_fios_total_latency_histogram(lat):
    """The recorded 99.999 % equals the one computed from the raw json+ lat_ns bins (read and
    write merged), capped at the measured maximum."""
    for p in measured(lat):
        job = json.loads((lat.folder / p["raw"]).read_text())["jobs"][0]
        bins = histogram.merge(*(histogram.parse_bins(job[d]["lat_ns"]["bins"])
                                 for d in ("read", "write") if job[d]["total_ios"]))
        top = max(job[d]["lat_ns"]["max"] for d in ("read", "write") if job[d]["total_ios"])
        assert p["lat_percentile_us"] == pytest.approx(
            min(histogram.percentile(bins, 99.999), top) / 1e3)


def fio_response_times(job: dict) -> dict:
    """A point's response times as fio's raw JSON gives them (total latency, lat_ns, in
    µs): the mean over every I/O of both directions, the maximum, each direction's mean
    (None: no I/O that way), and the IOPS."""
    lat = {d: job[d]["lat_ns"] for d in ("read", "write")}
    busy = [d for d in ("read", "write") if lat[d]["N"]]
    return {"lat_mean_us": sum(lat[d]["mean"] * lat[d]["N"] for d in busy)
            / sum(lat[d]["N"] for d in busy) / 1e3,
            "lat_max_us": max(lat[d]["max"] for d in busy) / 1e3,
            **{f"{d}_lat_mean_us": lat[d]["mean"] / 1e3 if d in busy else None
               for d in ("read", "write")},
            "iops": job["read"]["iops"] + job["write"]["iops"]}


def check_response_times_are_fios(folder, recs: list[dict]) -> int:
    """Every measured point of every round: its mean response time (ART), maximum, each
    direction's mean and its IOPS are fio's own, from the lat_ns of the raw JSON the run
    folder keeps. Returns how many points were checked (never none)."""
    points = [r for r in recs if r["type"] == "point" and not r["na"]]
    assert points
    for p in points:
        want = fio_response_times(fio_job(folder, p))
        where = (p["round"], p["rw_mix"], p["block_size"], p["raw"])
        assert [k for k in want if p[k] is None] == [k for k in want if want[k] is None], where
        assert {k: p[k] for k in want if want[k] is not None} == pytest.approx(
            {k: v for k, v in want.items() if v is not None}, rel=1e-9), where
    return len(points)


def check_tracking_is_the_4k_write_art(folder, recs: list[dict]) -> int:
    """Every round's tracking value is the ART fio measured at its own RND 4 KiB 0/100
    point (the one recorded for that round before its round record). Returns how many
    rounds were checked (never none)."""
    cell, checked = None, 0
    for r in recs:
        if r["type"] == "point" and (r["rw_mix"], r["block_size"]) == ("0/100", 4096):
            cell = r
        elif r["type"] == "round":
            assert cell is not None and cell["round"] == r["round"], r["round"]
            art = fio_response_times(fio_job(folder, cell))["lat_mean_us"]
            assert r["tracking"] == {"RND 4KiB 0/100 ART": pytest.approx(art, rel=1e-9)}, \
                r["round"]
            checked += 1
    assert checked
    return checked


def test_response_times_and_tracking_are_fios(lat):
    points = check_response_times_are_fios(lat.folder, lat.records)
    rounds = check_tracking_is_the_4k_write_art(lat.folder, lat.records)
    assert rounds == lat.of_type("test_end")[0]["rounds"]
    assert points == rounds * 6                     # 3 mixes x 8, 4 KiB; 0.5 KiB: N/A


def test_pdf_pages(lat):
    text = lat.pdf_text()
    for title in ("Latency test", "Steady State Convergence: Average Response Time",
                  "Steady State Convergence: Maximum Response Time",
                  "Steady State Measurement Window: RND 4KiB 0/100 ART",
                  "Measurement Window Tabular Data: ART, 5 9s, MRT, IOPS",
                  "99.999 % response time (5 9s)", "Maximum response time (MRT)",
                  "Mixed Points: Reads and Writes", "2D Plot: ART", "2D Plot: MRT",
                  "fio total latency", "Latency 0.5 KiB cells not measured (N/A)",
                  "Response Time QoS: ART, 99.99 %, 99.999 %, 99.9999 %, MRT",
                  "3D Plot: ART vs Block Size", "3D Plot: MRT vs Block Size",
                  "Response Time Histograms: RND 0/100"):
        assert title in text, title


def test_every_fio_run_used_io_uring(lat):
    """`--ioengine io_uring` (issue 33 §2): every job file and fio JSON of the run."""
    check_io_uring(lat)
