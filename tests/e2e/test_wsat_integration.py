"""The Write Saturation test end to end, as a user runs it.

On a loop device (no FTL: IOPS stay flat) with a short time limit: the stop by time, one
fio run with per-interval logs, samples, the partial last window, TGBW = bytes fio wrote,
the report's pages. On the emulated SSD (an FTL model whose writes slow down once it is
full) at the spec's 4 drive fills: the stop by fills, IOPS falling from FOB to a steady
level at least 2x lower, and nothing of the emulator left behind."""

import json
import re
import statistics
import subprocess
import sys

import pytest

from pts.emulate.power_model import model_for
from pts.procedure import steady_state
from tests.support import power_checks
from tests.support.engine import IO_URING_ARGS, check_io_uring
from tests.support.helpers import REPO, loop_device
from tests.support.ptsrun import run_pts

pytestmark = [pytest.mark.slow,
              pytest.mark.needs("root", "fio", "losetup", "blkdiscard", "pdftotext")]

SIZE = 64 << 20
HOURS = 0.003     # 10.8 s -> fio runtime 11 s: 1 s samples, then a partial window


@pytest.fixture(scope="module")
def loop(tmp_path_factory):
    reports = tmp_path_factory.mktemp("wsat") / "reports"
    with loop_device(SIZE, sector=4096) as dev:       # a 4Kn drive (issue 23 §4)
        return run_pts(dev, reports, "-k", "saturation", "--point-seconds", "1",
                       "--purge", "trim", "--wsat-hours", str(HOURS), "--wsat-fills", "1000",
                       *IO_URING_ARGS)


@pytest.fixture(scope="module")
def emulated(tmp_path_factory):
    reports = tmp_path_factory.mktemp("wsat-emu") / "reports"
    return run_pts("emulated:256M:default", reports, "-k", "saturation", "--point-seconds", "1",
                   "--power", "emulated")


def written_by_fio(run) -> int:
    raw = json.loads((run.folder / run.of_type("wsat_result")[0]["raw"]).read_text())
    return raw["jobs"][0]["write"]["io_bytes"]


def test_loop_stops_at_the_time_limit_and_passes(loop):
    end, result = loop.of_type("test_end")[0], loop.of_type("wsat_result")[0]
    print(f"WSAT loop: {loop.wall:.0f} s wall; {end['message']}")
    assert loop.proc.returncode == 0, loop.proc.stdout
    assert loop.run_json["device"]["logical_sector"] == 4096
    assert end["status"] == "complete" and result["stop"] == "time"
    assert 10 <= result["seconds"] <= 12
    assert "WSAT time limit 0.003 h instead of 24 h." in loop.run_json["deviations"]


def test_loop_no_wipc_one_fio_run_with_logs(loop):
    kinds = [r["type"] for r in loop.records]
    assert "wipc" not in kinds and kinds.index("purge") < kinds.index("sample")
    assert loop.of_type("write_cache")[0]["when"] == "before test"
    raw = loop.folder / "raw" / "wsat"
    assert sorted(p.name for p in raw.glob("*.json")) == ["wsat.json"]     # one fio run
    for kind in ("iops", "lat", "clat_hist"):
        assert len(list(raw.glob(f"wsat_{kind}.*.log"))) == 4               # TC 4
    opts = json.loads((raw / "wsat.json").read_text())["jobs"][0]["job options"]
    assert (opts["rw"], opts["bs"], opts["iodepth"], opts["numjobs"]) == ("randwrite", "4096",
                                                                          "32", "4")
    assert opts["log_avg_msec"] == "1000" and opts.get("time_based") == "0"


def test_loop_samples_tgbw_and_partial_window(loop):
    samples = loop.of_type("sample")
    result = loop.of_type("wsat_result")[0]
    assert [s["sample"] for s in samples] == list(range(1, len(samples) + 1))
    complete = [s for s in samples if not s["partial"]]
    assert len(complete) == result["samples"] >= 9
    assert all(s["partial"] for s in samples[len(complete):])
    assert [s["bytes_written"] for s in samples] == sorted(s["bytes_written"] for s in samples)
    last = samples[-1]
    assert last["bytes_written"] == written_by_fio(loop) == result["bytes_written"]
    assert last["tgbw_gb"] == pytest.approx(written_by_fio(loop) / 1e9)
    assert last["drive_fills"] == pytest.approx(written_by_fio(loop) / SIZE)
    for s in complete:
        assert s["iops"] > 0 and 0 < s["lat_mean_us"] and s["clat_max_us"] > 0
        if s["ios"] >= 100_000:                  # 99.999 % resolvable in this sample
            assert s["clat_percentile_us"] <= s["clat_max_us"]
        else:                                    # never the slowest I/O in its place
            assert s["clat_percentile_us"] is None
    # each sample's steady flag: the window of samples ending there, judged again with the
    # steady-state maths and the limits of the test_start (None before the first window)
    params = loop.of_type("test_start")[0]["parameters"]
    w, iops = params["window_rounds"], [s["iops"] for s in complete]
    for k, s in enumerate(complete, 1):
        expected = None if k < w else steady_state.check(
            iops[k - w:k], list(range(k - w + 1, k + 1)), window=w,
            max_data_excursion=params["max_data_excursion"],
            max_slope_excursion=params["max_slope_excursion"]).steady
        assert s["steady"] == expected, s


def test_loop_qos_levels_with_their_io_counts(loop):
    """Issue 12: 99.99/99.999/99.9999 % with the I/Os behind each, for the whole run (fio's
    json+ total-latency bins) and the final window (the clat histogram log)."""
    whole, window = loop.of_type("response_histogram")
    result = loop.of_type("wsat_result")[0]
    raw = json.loads((loop.folder / result["raw"]).read_text())["jobs"][0]["write"]
    assert whole["name"] == "Whole run" and "json+" in whole["source"]
    assert whole["ios"] == raw["total_ios"] == sum(int(v) for v in whole["bins"].values())
    first, last = result["ss_window"]
    assert window["name"] == f"Final window (samples {first}-{last})"
    assert "clat" in window["source"] and window["seconds"] == 5
    in_window = [s for s in loop.of_type("sample") if first <= s["sample"] <= last]
    assert window["ios"] == pytest.approx(sum(s["ios"] for s in in_window), rel=0.01)
    for rec in (whole, window):
        rows = rec["percentiles"]
        print(f"WSAT {rec['name']}: {rec['ios']:,} I/Os; "
              + ", ".join(f"{r['pct']} % {r['us']} µs" for r in rows))
        assert [r["pct"] for r in rows] == [99.99, 99.999, 99.9999]
        for r in rows:
            assert r["ios"] == rec["ios"]
            assert r["resolvable"] == (rec["ios"] >= r["ios_needed"])
            assert (r["us"] is None) == (not r["resolvable"])
        values = [r["us"] for r in rows if r["resolvable"]]
        assert values == sorted(values) and all(v <= rec["lat_max_us"] for v in values)
    assert whole["percentiles"][0]["resolvable"]          # >= 10,000 I/Os in 11 s


def test_loop_pdf_pages(loop):
    text = loop.pdf_text()
    for title in ("Write Saturation test", "IOPS vs Time", "IOPS vs TGBW",
                  "IOPS vs Drive Fills", "Response Times vs Drive Fills",
                  "Steady State: Final 5-Sample Window", "FOB IOPS (first sample)",
                  "Response Time Histogram: Whole run (TC4/QD32)",
                  "Response Time Histogram: Final window (samples",
                  "FOB / steady-state IOPS", "stopped by the time limit",
                  "WIPC (preconditioning) none"):
        assert title in text, title
    (end,) = loop.of_type("test_end")          # its stop condition, as the ledger says it
    assert end["message"].startswith(f"time limit {HOURS} h reached after ")
    status = f"Completed (no steady state required): {end['message'].split(';')[0]}"
    assert status in " ".join(text.split())
    assert "STEADY STATE NOT ACHIEVED" not in text


@pytest.mark.needs("fusermount3", "/dev/fuse", "mfusepy")          # the emulated SSD
def test_emulated_falls_from_fob_to_a_steady_level(emulated):
    result = emulated.of_type("wsat_result")[0]
    samples = [s for s in emulated.of_type("sample") if not s["partial"]]
    iops = [s["iops"] for s in samples]
    print(f"WSAT emulated: {emulated.wall:.0f} s wall; FOB {result['fob_iops']:.0f}, SS "
          f"{result['ss_average']:.0f} (window {result['ss_window']}), ratio "
          f"{result['fob_ss_ratio']:.2f}, TGBW {result['tgbw_gb']:.3f} GB, "
          f"{result['drive_fills']:.3f} fills; IOPS {[round(v) for v in iops]}")
    assert emulated.proc.returncode == 0, emulated.proc.stdout
    assert result["stop"] == "fills" and 4 <= result["drive_fills"] < 4.01
    assert result["fob_iops"] == iops[0]
    assert result["ss_average"] == pytest.approx(sum(iops[-5:]) / 5)
    assert result["fob_ss_ratio"] == pytest.approx(iops[0] / result["ss_average"])
    # The fall, judged over several 1 s samples: the median of the first five against the
    # last five's mean, not the first sample alone (fio's start-up on a loaded host lands in
    # it). Seen under load (CI's QEMU guest booting and two CPU hogs): first five 4007, 3332,
    # 4986, 4885, 4472 (median 4472), last five 1420 on average: 3.15x; the first sample
    # alone 2.82x. The model's fall is 6.7k -> ~1.5k (pts/emulate/README.md): 2x leaves a
    # margin of a third.
    assert statistics.median(iops[:5]) >= 2 * result["ss_average"], iops[:5]


@pytest.mark.needs("fusermount3", "/dev/fuse", "mfusepy")          # the emulated SSD
def test_emulated_first_sample_is_the_purge_probe(emulated):
    """WSAT's purge probe is its first sample (no extra writes); FOB/SS >= 2 here, far
    above the spec file's 1.1: no purge warning."""
    result = emulated.of_type("wsat_result")[0]
    (probe,) = emulated.of_type("purge_probe")
    assert probe["iops"] == result["fob_iops"] and probe["raw"] == result["raw"]
    assert (probe["block_size"], probe["thread_count"], probe["queue_depth"]) == (4096, 4, 32)
    assert "the purge appears not to have returned the drive to FOB" not in \
        emulated.proc.stdout + " ".join(emulated.pdf_text().split())


@pytest.mark.needs("fusermount3", "/dev/fuse", "mfusepy")          # the emulated SSD
def test_emulated_tgbw_at_the_end_is_what_fio_wrote(emulated):
    last = emulated.of_type("sample")[-1]
    assert last["tgbw_gb"] * 1e9 == pytest.approx(written_by_fio(emulated), rel=0.01)
    counters = emulated.of_type("device_counters")
    assert [c["when"] for c in counters] == ["test start", "after purge", "test end"]
    host = counters[-1]["counters"]
    assert host["nand_writes"] > host["host_writes"]                 # GC amplified the writes


@pytest.mark.needs("fusermount3", "/dev/fuse", "mfusepy")          # the emulated SSD
def test_emulated_energy_of_the_run_and_its_samples(emulated):
    """--power emulated (issue 51 §3): the one fio run's energy (its phase_power "run",
    read at its edges) within 1 % of the power model's truth from the emulator's counters
    after the purge and at the test's end (nothing else touches the drive between them);
    each sample's window (fio's log times on Unix time) inside it and covered whole; the
    report's Power page lists them."""
    (run,) = power_checks.phases(emulated, "run").values()
    counters = {c["when"]: c["counters"] for c in emulated.of_type("device_counters")}
    truth = power_checks.truth_j(model_for("default"), counters["after purge"],
                                 counters["test end"], run["end"] - run["start"])
    samples = power_checks.phases(emulated, "sample")
    print(f"WSAT emulated: run {run['energy_j']:.3f} J, the model's {truth:.3f} J; "
          f"{len(samples)} sample windows, {sum(s['energy_j'] for s in samples.values()):.3f} J")
    assert run["energy_j"] == pytest.approx(truth, rel=0.01)
    assert power_checks.coverage(run) > 0.999
    assert sorted(samples) == [s["sample"] for s in emulated.of_type("sample")]
    assert all(run["start"] <= s["start"] < s["end"] <= run["end"] + 0.05
               and power_checks.coverage(s) > 0.999 for s in samples.values())
    assert sum(s["energy_j"] for s in samples.values()) <= run["energy_j"]
    assert all(s["mean_w"] > model_for("default").idle_w for s in samples.values())
    text = " ".join(emulated.pdf_text().split())
    assert "Power: per phase" in text and "sample" in text


@pytest.mark.needs("fusermount3", "/dev/fuse", "mfusepy")          # the emulated SSD
def test_emulator_gone_after_the_run(emulated):
    serial = emulated.run_json["device"]["serial"]
    listed = subprocess.run([sys.executable, "-m", "pts", "emulate", "list"], cwd=REPO,
                            capture_output=True, text=True, check=True).stdout
    assert serial not in listed
    assert serial not in subprocess.run(["losetup", "-a"], capture_output=True,
                                        text=True).stdout


FAST = 32 << 20      # a tmpfs loop device writes its 4 fills (128 MiB) in well under 1 s


def test_a_drive_that_writes_its_fills_within_one_sample_is_told_the_remedy(tmp_path):
    """WSAT "too fast" on a real run (tests/unit/test_wsat_samples.py has the wording on
    constructed results): the spec's 4 drive fills of a 32 MiB loop device at the spec's
    60 s sample give no sample; the test ends in error naming what fio did (its bytes and
    runtime, as fio's own JSON says) and a --wsat-fills that makes 5 samples at the speed
    fio measured."""
    from pts.config.spec import load_spec

    reports = tmp_path / "reports"
    with loop_device(FAST, sector=4096) as dev:
        run = run_pts(dev, reports, "-k", "saturation", "--purge", "trim", "--no-report",
                      timeout=300)
    fills = load_spec().wsat.capacity_multiple
    (end,) = run.of_type("test_end")
    raw = json.loads((run.folder / "raw" / "wsat" / "wsat.json").read_text())["jobs"]
    written = sum(j["write"]["io_bytes"] for j in raw)
    seconds = max(j["write"]["runtime"] for j in raw) / 1000
    print(f"WSAT too fast: {written:,} bytes in {seconds} s; {end['message']}")
    assert run.proc.returncode == 1 and end["status"] == "error"
    assert written == fills * FAST and seconds < 60            # what fio did: all, at once
    assert end["message"].startswith(
        f"RuntimeError: WSAT: fio wrote the {fills:g} drive fills ({written:,} bytes) in "
        f"{seconds:.1f} s, shorter than one 60 s sample: nothing to report. Make the run "
        "last at least 5 samples (one steady-state window): raise --wsat-fills (at this "
        "speed, --wsat-fills ")
    more = float(re.search(r"--wsat-fills ([\d.]+) takes about 5 x 60 s", end["message"])[1])
    assert 300 <= more * FAST / (written / seconds) <= 300 * 1.01     # 3 digits, rounded up
    samples = run.of_type("sample")                # the one it has is partial: kept, not used
    assert samples and all(x["partial"] for x in samples) and not run.of_type("wsat_result")


def test_every_fio_run_used_io_uring(loop):
    """`--ioengine io_uring` (issue 33 §2): every job file and fio JSON of the run."""
    check_io_uring(loop)
