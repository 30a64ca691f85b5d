"""The RWSW tests end to end, as a user runs them: `pytest pts/ -k rwsw --workload FILE` on a
loop device in /dev/shm, a hand-written 3-stream ATW (RND 4K R 60 %, RND 4K W 30 %,
SEQ 128K W 10 %), 1 s points, 5 rounds (--wsat-hours 0.00125: rwsw-wsat's time limit is
its 5th round). Checked from the ledger against fio's own JSON: per stream the achieved
share of I/Os within 2 points of its target, every point record's sums equal to fio's,
the steady-state evidence of every round, each stream alone in rwsw-streams, the ATW and
the readings in test_start; the report renders. About 25 s of device time."""

import hashlib
import json
import subprocess
import sys

import pytest

from tests.support.helpers import REPO, loop_device
from tests.support.ptsrun import expected_outcomes, run_pts, run_suite, spec_rule

pytestmark = [pytest.mark.slow, pytest.mark.needs("root", "fio", "losetup", "blkdiscard")]

SIZE = 64 << 20
STREAMS = (("RND", "R", "4KiB", 60.0, "randread", 4096),
           ("RND", "W", "4KiB", 30.0, "randwrite", 4096),
           ("SEQ", "W", "128KiB", 10.0, "write", 131072))
ATW = """[workload]
format = "snia-pts-atw"
version = 1
name = "three streams"
thread_count = 2
queue_depth = 8
""" + "".join(f"""
[[stream]]
access = "{a}"
direction = "{d}"
size = "{s}"
share_pct = {p}
""" for a, d, s, p, _, _ in STREAMS) + """
[provenance]
made_by = "hand, tests/e2e/test_rwsw_integration.py"
"""
ARGS = ("-k", "rwsw", "--point-seconds", "1", "--max-rounds", "5", "--purge", "trim",
        "--wsat-hours", "0.00125", "--wsat-fills", "1000")


@pytest.fixture(scope="module")
def atw_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("atw") / "three.toml"
    path.write_text(ATW)
    return path


@pytest.fixture(scope="module")
def run(tmp_path_factory, atw_file):
    reports = tmp_path_factory.mktemp("rwsw") / "reports"
    with loop_device(SIZE) as dev:
        dry = run_suite("--device", dev, "--dry-run", "--workload", str(atw_file), *ARGS)
        done = run_pts(dev, reports, "--workload", str(atw_file), *ARGS)
    return done, dry


def raw(run, point: dict) -> dict:
    return json.loads((run.folder / point["raw"]).read_text())


def test_multi_wsat_runs_to_its_time_limit_with_steady_state_shown(run):
    run, _ = run
    end = run.of_type("test_end", "rwsw-wsat")[0]
    assert (end["status"], end["rounds"]) == ("complete", 5), end
    assert end["message"].startswith("stop rule: time limit 0.00125 h reached at round 5")
    rounds = run.of_type("round", "rwsw-wsat")
    assert [r["round"] for r in rounds] == [1, 2, 3, 4, 5]
    assert all(r["steady_state"] == {"ATW IOPS": None} for r in rounds[:4])
    evidence = rounds[4]["steady_state"]["ATW IOPS"]
    assert evidence["steady"] == rounds[4]["steady"] and "slope" in evidence
    assert "[pts rwsw-wsat] round 5/5: ATW IOPS" in run.proc.stdout
    assert "stop rule: time limit" in run.proc.stdout


def test_every_stream_within_two_points_of_its_target_from_fios_own_jobs(run):
    run, _ = run
    points = run.of_type("point", "rwsw-wsat")
    assert len(points) == 5
    for p in points:
        jobs = raw(run, p)["jobs"]
        ios = [j["read"]["total_ios"] + j["write"]["total_ios"] for j in jobs]
        assert [j["jobname"] for j in jobs] == ["p00.s0", "p00.s1", "p00.s2"]
        for stream, spec, n in zip(p["streams"], STREAMS, ios, strict=True):
            assert stream["ios"] == n and stream["target_pct"] == spec[3]
            assert stream["achieved_pct"] == pytest.approx(100 * n / sum(ios))
            assert abs(100 * n / sum(ios) - spec[3]) <= 2.0, (p["round"], stream)
        assert p["shares_within_tolerance"] is True and p["mix_warning"] is None
        opts = [j["job options"] for j in jobs]
        assert [(o["rw"], o["flow"], o["flow_id"]) for o in opts] == [
            ("randread", "600", "1"), ("randwrite", "300", "1"), ("write", "100", "1")]
    assert not [d for d in run.of_type("deviation", "rwsw-wsat") if "ATW share" in d["text"]]


def test_point_records_are_the_sums_of_fios_per_stream_results(run):
    run, _ = run
    for p in run.of_type("point", "rwsw-wsat") + run.of_type("point", "rwsw-streams"):
        jobs = raw(run, p)["jobs"]
        assert p["ios"] == sum(j[d]["total_ios"] for j in jobs for d in ("read", "write"))
        assert p["iops"] == pytest.approx(sum(j[d]["iops"] for j in jobs
                                              for d in ("read", "write")))
        assert p["write_bytes"] == sum(j["write"]["io_bytes"] for j in jobs)
        assert p["read_bytes"] == sum(j["read"]["io_bytes"] for j in jobs)


def test_individual_streams_each_alone_to_their_verdict(run):
    run, _ = run
    points = run.of_type("point", "rwsw-streams")
    assert len(points) == 15
    for p in points:
        (job,) = raw(run, p)["jobs"]
        rw, bs = STREAMS[p["index"]][4:]
        opts = job["job options"]
        assert (opts["rw"], opts["bs"], opts["numjobs"], opts["iodepth"]) == (
            rw, str(bs), "2", "8") and "flow" not in opts
    recs = [r for r in run.records if r.get("test") == "rwsw-streams"]
    exp = expected_outcomes(recs, spec_rule(run.folder))["rwsw-streams"]
    end = run.of_type("test_end", "rwsw-streams")[0]
    assert (end["status"], end["rounds"], end["window"]) == (exp.status, exp.rounds, exp.window)
    assert run.proc.returncode == (0 if exp.passed else 1), run.proc.stdout[-2000:]


def test_the_atw_and_readings_are_recorded(run, atw_file):
    run, _ = run
    assert run.run_json["options"]["workload"] == str(atw_file)
    for test, section in (("rwsw-wsat", "rwsw_wsat"), ("rwsw-streams", "rwsw_streams")):
        params = run.of_type("test_start", test)[0]["parameters"]
        atw = params["atw"]
        assert atw["sha256"] == hashlib.sha256(atw_file.read_bytes()).hexdigest()
        assert (atw["name"], atw["oio"]) == ("three streams", 16)
        assert [s["stream"] for s in atw["streams"]] == ["RND 4K R", "RND 4K W", "SEQ 128K W"]
        assert atw["provenance"] == {"made_by": "hand, tests/e2e/test_rwsw_integration.py"}
        keys = {r["key"] for r in params["readings"]}
        assert {f"{section}.round_seconds", "rwsw_fio.flow_sleep_us",
                "rwsw_atw.share_tolerance_pct"} <= keys


def test_the_dry_run_shows_the_generated_jobs_and_the_report_renders(run):
    done, dry = run
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "[p00.s2]" in dry.stdout and "flow=100" in dry.stdout and "flow_sleep=10" in \
        dry.stdout
    assert "stop rule: 1000 drive fills" in dry.stdout
    report = subprocess.run([sys.executable, "-m", "pts", "report", str(done.folder)],
                            cwd=REPO, capture_output=True, text=True, timeout=300)
    assert report.returncode == 0, report.stdout + report.stderr
    assert (done.folder / "report.pdf").stat().st_size > 0


def test_without_a_workload_the_rwsw_tests_skip_naming_the_option():
    proc = run_suite("-k", "rwsw", "-rs")
    assert "2 skipped" in proc.stdout, proc.stdout + proc.stderr
    assert "give --workload FILE" in proc.stdout


def test_a_bad_workload_file_stops_the_session_naming_file_and_key(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(ATW.replace("share_pct = 10.0", "share_pct = 20.0"))
    proc = run_suite("-k", "rwsw", "--workload", str(bad))
    assert proc.returncode == 4, proc.stdout + proc.stderr        # pytest's usage error
    assert f"{bad}: [[stream]] share_pct: the shares sum to 110" in proc.stderr
