"""The HIR test end to end on an emulated SSD (FTL model with background GC in idle time):
the purge probe, preconditioning to the baseline through the round runner (rounds of 2
intervals of 2 s, the last tracked: a spec-file variant of the 30-interval reading, declared),
five wait states with --hir-repetitions 2 and --time-scale 0.2 (1 s writes, 1/2/3/5/10 s
idle), the records, the measured idle, the lead-in declared only as measured, and the
acceptance of issue 13: after the longest idle, write IOPS clearly above the shortest-idle
state and above the baseline. About 3 minutes."""

import pytest

from pts.emulate.power_model import model_for
from tests.support import headers, power_checks
from tests.support.engine import IO_URING_ARGS, check_io_uring
from tests.support.helpers import pdf_text
from tests.support.ptsrun import check_outcomes, run_pts, spec_variant

INTERVALS = 2          # per preconditioning round (the reading: 30)

pytestmark = [pytest.mark.slow,
              pytest.mark.needs("root", "fio", "losetup", "blkdiscard", "pdftotext",
                                "fusermount3", "/dev/fuse", "mfusepy")]     # the emulated SSD


@pytest.fixture(scope="module")
def hir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hir")
    spec = spec_variant(folder, {"precondition_round_intervals = 30":
                                 f"precondition_round_intervals = {INTERVALS}"})
    return run_pts("emulated:64M:default", folder / "reports", "-k", "hir", "--spec",
                   str(spec), "--point-seconds", "2", "--max-rounds", "8",
                   "--hir-repetitions", "2", "--time-scale", "0.2", "--power", "emulated",
                   *IO_URING_ARGS, timeout=500)


def test_hir_preconditioning_rounds_write_every_interval_and_track_the_last(hir):
    (start,) = hir.of_type("test_start")
    p = start["parameters"]
    assert (p["precondition_round_intervals"], p["round_seconds"],
            p["precondition_sample"]) == (INTERVALS, INTERVALS * 2, "last")
    assert any(f"HIR preconditioning rounds of {INTERVALS} interval(s) of 2 s, the last "
               "tracked, instead of 30" in d for d in hir.run_json["deviations"] +
               [r["text"] for r in hir.of_type("deviation")])
    (probe,) = hir.of_type("purge_probe")                   # right after the purge
    kinds = [r["type"] for r in hir.records]
    assert kinds.index("purge") < kinds.index("purge_probe") < kinds.index("point")
    # each round: the first interval(s) written, then the measured (last) one, then its verdict
    order = [(r["type"], r.get("round") or r.get("when")) for r in hir.records
             if r["type"] in ("prewrite", "point", "round")]
    rounds = len(hir.of_type("round"))
    assert rounds >= 1
    assert order == [x for n in range(1, rounds + 1) for x in (
        ("prewrite", f"precondition round {n}"), ("point", n), ("round", n))]
    assert all(w["seconds"] == (INTERVALS - 1) * 2 and w["bytes_written"] > 0
               for w in hir.of_type("prewrite"))
    assert probe["iops"] > 0


def test_hir_lead_in_is_declared_only_as_measured(hir):
    texts = [r["text"] for r in hir.of_type("deviation")]
    assert [s["state"] for s in hir.of_type("hir_state")] == [1, 2, 3, 4, 5]
    for s in hir.of_type("hir_state"):
        (lead,) = [w for w in hir.of_type("hir_write")
                   if w["state"] == s["state"] and w["segment"] == "lead_in"]
        seconds = lead["end"] - lead["start"]
        mine = [t for t in texts if t.startswith(f"HIR wait state {s['state']}: its first")]
        if seconds - s["write_s"] > s["idle_s"] / 2:
            assert mine == [mine[0]] and f"lasted {seconds:.1f} s instead of" in mine[0]
        else:
            assert mine == []


def test_hir_runs_and_records_every_wait_state(hir):
    # A baseline that did not reach steady state fails the item (PTS 2.0.2 §7.5 step 2):
    # whether it did is recomputed from the preconditioning's recorded rounds.
    expected = check_outcomes(hir.folder, hir.records)["hir"]
    assert hir.proc.returncode == (0 if expected.passed else 1), hir.proc.stdout
    (base,) = hir.of_type("hir_baseline")
    assert (base["steady"], base["rounds"], base["window"]) == (
        expected.passed, expected.rounds, expected.window)
    # the baseline is the mean tracking IOPS of that window (pts.results.records.HirBaseline)
    tracked = {r["round"]: list(r["tracking"].values()) for r in hir.of_type("round")}
    window = [v for n in range(base["window"][0], base["window"][1] + 1) for v in tracked[n]]
    assert base["ss_iops"] == pytest.approx(sum(window) / len(window))
    states = hir.of_type("hir_state")
    assert [s["state"] for s in states] == [1, 2, 3, 4, 5]
    assert [s["idle_s"] for s in states] == [1, 2, 3, 5, 10]
    writes = hir.of_type("hir_write")
    texts = [r["text"] for r in hir.of_type("deviation")]
    for s in states:
        mine = [w for w in writes if w["state"] == s["state"]]
        assert [w["segment"] for w in mine].count("wait") == 2
        assert [w["segment"] for w in mine].count("lead_in") == 1
        # The return to baseline: one interval per 1 s window every thread's log holds
        # (fio leaves out a last window a thread ends early in, as a loaded host makes it
        # do); a state short of its 2 says so in a deviation.
        logged = min(map(len, _thread_stamps(hir, s["state"], "-baseline")))
        assert [w["segment"] for w in mine].count("baseline") == logged >= 1
        short = f"HIR wait state {s['state']}: {logged} return-to-baseline intervals"
        assert any(short in t for t in texts) == (logged < 2)
        assert s["ss_iops"] == base["ss_iops"]
        assert s["ratio"] == pytest.approx(s["wait_iops"] / base["ss_iops"])
        _check_idle(hir, s, mine)
    assert any("HIR: 2 repetitions" in d for d in hir.run_json["deviations"])


WINDOW_S = 0.010     # the wait-state job's IOPS log window (log_avg_msec 10)


def _thread_stamps(hir, state: int, job: str = "") -> list[list[int]]:
    """Each fio thread's log stamps (Unix ms) of windows with I/O, read from the run's raw
    files (ws{N}{job}_iops.{thread}.log: "time, iops, ddir, 0, 0")."""
    raw = hir.folder / "raw" / "hir" / f"ws{state}"
    logs = sorted(raw.glob(f"ws{state}{job}_iops.*.log"))
    assert len(logs) == 4, logs                            # numjobs (thread_count) 4
    return [[int(r.split(",")[0]) for r in p.read_text().splitlines()
             if r.strip() and int(r.split(",")[1]) > 0] for p in logs]


def _check_idle(hir, s: dict, mine: list[dict]) -> None:
    """The idle of a wait state, from fio's Unix-stamped logs stored with the run.

    What the product makes is each thread's idle: fio `thinktime` = the planned idle, slept
    after the thread's queue drained, so no thread writes for at least that long (each
    thread's gap, measured to the 10 ms log window at both ends). What it records,
    idle_measured_s, is the device's idle: no thread writing. That is shorter than a
    thread's by how far apart the threads stopped, which is how long their queues took to
    drain: a few ms on an idle host, 100 ms and more on a loaded one. So the recorded idle
    is checked against the threads' own stops in the same logs, not against a fixed
    wall-clock margin. A thread's idle longer than idle + one write period would be a write
    period lost (thinktime_iotime writes between two thinks)."""
    idle, write = s["idle_s"], s["write_s"]
    per_thread = []
    for stamps in _thread_stamps(hir, s["state"]):
        runs = [[stamps[0], stamps[0]]]
        for t in stamps[1:]:
            if (t - runs[-1][1]) / 1000 >= idle / 2:          # the product's gap rule
                runs.append([t, t])
            runs[-1][1] = t
        assert len(runs) == 3, runs                 # the lead-in and the 2 wait writes
        per_thread.append(runs)
    gaps = []
    for k in (1, 2):                                # the idle before wait write k
        stops = [runs[k - 1][1] / 1000 for runs in per_thread]
        starts = [runs[k][0] / 1000 for runs in per_thread]
        own = [b - WINDOW_S - a for a, b in zip(stops, starts, strict=True)]
        assert all(idle - 2 * WINDOW_S <= g < idle + write for g in own), (k, own)
        device = min(starts) - WINDOW_S - max(stops)
        spread = max(stops) - min(stops)
        assert idle - 2 * WINDOW_S - spread <= device <= min(own), (k, device, spread, own)
        (rec,) = [w for w in mine if w["segment"] == "wait" and w["interval"] == k]
        assert rec["idle_before_s"] == pytest.approx(device, abs=1e-6)
        gaps.append(device)
    assert s["idle_measured_s"] == pytest.approx([min(gaps), sum(gaps) / 2, max(gaps)],
                                                 abs=1e-6)


def test_hir_long_idle_recovers_write_iops_on_the_emulated_ssd(hir):
    states = {s["idle_s"]: s for s in hir.of_type("hir_state")}
    base = hir.of_type("hir_baseline")[0]["ss_iops"]
    print(f"HIR emulated: baseline {base:.0f} IOPS; " + ", ".join(
        f"{i} s idle {s['wait_iops']:.0f} ({s['ratio']:.2f}x)" for i, s in states.items()))
    # Each state's wait_iops is the mean of its --hir-repetitions (2) wait writes, the
    # baseline the mean of the preconditioning's 5-round window: several measurements each.
    # Seen under load (CI's QEMU guest booting and two CPU hogs): 10 s idle 2957 and 3372
    # IOPS, 1 s idle 1484 and 1438, baseline 1507: 2.17x and 2.10x; even the weakest pair
    # of single writes (2957 / 1484) is 1.99x. 1.3x leaves that a margin of a third: the
    # recovery is the model's (idle GC: 20 blocks/s after 0.5 s idle), the host's CPU only
    # caps the burst from above.
    assert states[10]["wait_iops"] > 1.3 * states[1]["wait_iops"]
    assert states[10]["wait_iops"] > 1.3 * base


def test_hir_report_pages(hir):
    text = hir.pdf_text()
    assert "Host Idle Recovery" in text
    assert "IOPS vs time" in text and "wait state" in text.lower()


def test_hir_wait_states_are_named_as_the_run_declares(hir):
    """Wait-state names are a reading of the spec (spec file wait_state_naming, default
    idle / 5 s write of the spec's values, so --time-scale keeps them): recorded in the
    test_start, used on the pages, listed with the run's other readings."""
    (start,) = hir.of_type("test_start")
    assert start["parameters"]["wait_state_names"] == ["WS1", "WS2", "WS3", "WS5", "WS10"]
    naming = [r for r in start["parameters"]["readings"] if r["key"] == "hir.wait_state_naming"]
    assert [r["value"] for r in naming] == ["idle_over_write"]
    text = " ".join(hir.pdf_text().split())
    assert "wait state WS10 (10 s idle)" in text and "wait state WS5 (5 s idle)" in text
    assert "Readings of the specification" in text and "hir.wait_state_naming" in text


def test_report_headers_state_what_ran(hir):
    """Every header block equals the run's data (tests/support/headers.py)."""
    bad, seen = headers.mismatches(hir.folder / "report.pdf", hir.folder)
    assert not bad, "\n".join(bad)
    assert set(seen) == {"hir"} and seen["hir"] >= 3


def test_every_fio_run_used_io_uring(hir):
    """`--ioengine io_uring` (issue 33 §2): every job file and fio JSON of the run."""
    check_io_uring(hir)


def test_every_page_header_shows_the_engine(hir):
    """Every page's Test platform column equals run.json's, the engine from its options
    (tests/support/headers.py), here io_uring with its options."""
    bad, seen = headers.mismatches(hir.folder / "report.pdf", hir.folder)
    assert seen.get("hir"), seen
    assert not [b for b in bad if "Test platform" in b.split("\n")[0]], bad[:3]
    assert "io_uring (fixed buffers, registered files)" in pdf_text(hir.folder / "report.pdf")


def test_each_wait_state_has_its_power_windows(hir):
    """--power emulated (issue 51 §3): each wait state's window (its wait run, the last
    idle and its return to baseline) with its wait and baseline runs' inside it, each covered
    whole; the runs draw more than idle; the Power page lists them."""
    states, waits, bases = (power_checks.phases(hir, name)
                            for name in ("wait state", "wait", "baseline"))
    numbers = [s["state"] for s in hir.of_type("hir_state")]
    assert sorted(states) == sorted(waits) == sorted(bases) == numbers
    idle = model_for("default").idle_w
    for n in numbers:
        whole, wait, base = states[n], waits[n], bases[n]
        assert whole["start"] <= wait["start"] < wait["end"] <= base["start"] < base["end"] \
            <= whole["end"]
        assert all(power_checks.coverage(r) > 0.999 for r in (whole, wait, base))
        assert wait["energy_j"] + base["energy_j"] < whole["energy_j"]
        assert wait["mean_w"] > idle and base["mean_w"] > idle
    text = " ".join(hir.pdf_text().split())
    assert "Power: per phase" in text and "wait state" in text
