"""`python -m pts compare` on constructed run folders (tests/support/synthetic/runfactory.py): the
refusal of
mixed runs, --allow-mixed, compare.csv's figures and differences, compare.pdf's text."""

import csv
import math

import pytest

from pts.cli.main import main
from tests.support.helpers import pdf_text
from tests.support.synthetic.runfactory import (
    BASE_IOPS,
    FALLING_CURVE,
    STEADY_CURVE,
    RunFolder,
    build_run,
    run_json,
    write_iops_test,
)

FASTER = tuple(1.1 * m for m in STEADY_CURVE)     # 10 % more IOPS in every round


def wsat(run: RunFolder, scale: float) -> None:
    run.record("test_start", test="wsat", title="WSAT", clause="8",
               parameters={"sample_seconds": 60, "thread_count": 4, "queue_depth": 32,
                           "stop_drive_fills": 4.0, "stop_hours": 24.0})
    for n in range(1, 11):
        run.record("sample", test="wsat", sample=n, start_s=60.0 * (n - 1), end_s=60.0 * n,
                   iops=scale * (50000 if n < 4 else 20000), tgbw_gb=2.0 * n,
                   lat_mean_us=100.0, partial=False)
    run.record("wsat_result", test="wsat", stop="fills", tgbw_gb=20.0,
               fob_iops=scale * 50000, ss_average=scale * 20000, fob_ss_ratio=2.5,
               ss_window=[6, 10])
    run.record("test_end", test="wsat", status="complete", rounds=10, steady_round=None,
               window=[6, 10], message="2 drive fills written")


def folder(tmp_path, name, curve=STEADY_CURVE, with_wsat=False, **options):
    info = run_json()
    info["options"] |= options
    run = RunFolder(tmp_path / name, info)
    write_iops_test(run, curve)
    if with_wsat:
        wsat(run, 1.0 if name == "a" else 0.9)
    return run.path


def compare_rows(out) -> list[dict]:
    with (out / "compare.csv").open() as fh:
        return list(csv.DictReader(fh))


def test_two_runs_csv_holds_each_value_and_the_difference(tmp_path, capsys):
    a, b = folder(tmp_path, "a"), folder(tmp_path, "b", FASTER)
    out = tmp_path / "out"
    assert main(["compare", str(a), str(b), "-o", str(out)]) == 0
    assert capsys.readouterr().out.split() == [str((out / "compare.pdf").resolve()),
                                               str((out / "compare.csv").resolve())]
    rows = [r for r in compare_rows(out) if r["cell"] == "RND 4KiB 0/100"]
    assert [r["run"] for r in rows] == ["1", "2"]
    window_mean = sum(STEADY_CURVE[2:7]) / 5
    assert math.isclose(float(rows[0]["value"]), BASE_IOPS[("0/100", 4096)] * window_mean)
    assert math.isclose(float(rows[1]["value"]), 1.1 * float(rows[0]["value"]))
    assert rows[0]["diff_pct_vs_run1"] == "" and rows[1]["diff_pct_vs_run1"] == "10.000"
    na = [r for r in compare_rows(out) if r["block_size"] == "512"]
    assert na and all(r["value"] == "" for r in na)
    text = pdf_text(out / "compare.pdf")
    for words in ("Drive comparison", "The runs", "Steady-state convergence",
                  "IOPS by block size, per R/W mix", "side by side", "+10.0 %", "COMPLIANT RUN"):
        assert words in text, words


def test_different_settings_refused_naming_the_difference(tmp_path, capsys):
    a = folder(tmp_path, "a")
    b = folder(tmp_path, "b", point_seconds=1, purge="trim")
    out = tmp_path / "out"
    assert main(["compare", str(a), str(b), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "option point_seconds: run 1 60, run 2 1" in err
    assert "option purge: run 1 'nvme-format', run 2 'trim'" in err
    assert "--allow-mixed" in err and not out.exists()
    assert main(["compare", str(a), str(b), "-o", str(out), "--allow-mixed"]) == 0
    first_page = pdf_text(out / "compare.pdf").split("The runs")[0]
    assert "option point_seconds: run 1 60, run 2 1" in first_page
    assert "different specs or settings" in first_page


def test_different_spec_refused(tmp_path, capsys):
    a = folder(tmp_path, "a")
    info = run_json(spec={"name": "pts-2.0.2-client", "title": "Client"})
    run = RunFolder(tmp_path / "b", info)
    write_iops_test(run, STEADY_CURVE)
    assert main(["compare", str(a), str(run.path), "-o", str(tmp_path / "o")]) == 2
    assert "spec: run 1 'pts-2.0.2-enterprise', run 2 'pts-2.0.2-client'" in \
        capsys.readouterr().err


def test_wsat_and_fob_and_tests_not_in_every_run(tmp_path, capsys):
    a = folder(tmp_path, "a", with_wsat=True)
    b = folder(tmp_path, "b", FALLING_CURVE, with_wsat=True)
    c = build_run(tmp_path, "c")                          # no WSAT
    out = tmp_path / "out"
    assert main(["compare", str(a), str(b), "-o", str(out)]) == 0
    text = pdf_text(out / "compare.pdf")
    assert "IOPS against total GB written" in text and "WSAT figures, side by side" in text
    assert "FOB vs steady state, per drive" in text and "STEADY STATE NOT ACHIEVED" in text
    fob = [r for r in compare_rows(out) if r["metric"] == "fob_iops"]
    assert [float(r["value"]) for r in fob] == [50000.0, 45000.0]
    assert main(["compare", str(a), str(c), "-o", str(out)]) == 0
    assert "Not compared: wsat (not in run 2)" in pdf_text(out / "compare.pdf")


@pytest.mark.parametrize("args", [["one"], ["missing", "other"]])
def test_bad_input_exit_2(tmp_path, capsys, args):
    a = build_run(tmp_path, "a")
    argv = ["compare", str(a)] + ([] if args == ["one"] else [str(tmp_path / "missing")])
    assert main(argv) == 2
    assert "compare:" in capsys.readouterr().err


def as_test(folder, name: str):
    """The folder's IOPS records relabelled as test `name` (a Latency / Throughput run's
    points hold the same fields: lat_mean_us, lat_max_us, mbps)."""
    ledger = folder / "ledger.jsonl"
    ledger.write_text(ledger.read_text().replace('"test": "iops"', f'"test": "{name}"'))
    return folder


@pytest.mark.parametrize("name, sections", [
    ("latency", ["Average response time (ART) (us), side by side",
                 "Maximum response time (MRT) (us), side by side"]),
    ("throughput-1024k", ["Throughput (MB/s), side by side"]),
])
def test_latency_and_throughput_compare_their_metrics(tmp_path, capsys, name, sections):
    a = as_test(folder(tmp_path, "a"), name)
    b = as_test(folder(tmp_path, "b", FASTER), name)
    out = tmp_path / "out"
    assert main(["compare", str(a), str(b), "-o", str(out)]) == 0
    text = pdf_text(out / "compare.pdf")
    for words in sections:
        assert words in text
    metrics = {r["metric"] for r in compare_rows(out)}
    qos = {"qos_99.99", "qos_99.999", "qos_99.9999"}      # no json+ bins here: all empty
    assert metrics == ({"lat_mean_us", "lat_max_us"} | qos if name == "latency"
                       else {"mbps"})
    assert all(r["value"] == "" for r in compare_rows(out) if r["metric"] in qos)
    # 10 % more IOPS: 10 % more MB/s, 1/1.1 of the latency
    row = next(r for r in compare_rows(out) if r["cell"] == "RND 4KiB 0/100"
               and r["run"] == "2")
    expected = 10.0 if name != "latency" else 100 * (1 / 1.1 - 1)
    assert float(row["diff_pct_vs_run1"]) == pytest.approx(expected, abs=1e-3)


def test_latency_compares_qos_levels_and_says_n_r(tmp_path):
    """The QoS levels side by side, from each run's json+ bins, with the report's "n/r" where
    a run's I/O count cannot resolve a level (0/100 8 KiB: 50,000 I/Os per point)."""
    from tests.support.synthetic.runfactory_extra import write_latency_test
    paths = []
    for name, curve in (("a", STEADY_CURVE), ("b", FASTER)):
        run = RunFolder(tmp_path / name, run_json())
        write_latency_test(run, curve)
        paths.append(str(run.path))
    out = tmp_path / "out"
    assert main(["compare", *paths, "-o", str(out)]) == 0
    rows = {(r["cell"], r["metric"], r["run"]): r for r in compare_rows(out)}
    first = float(rows[("RND 4KiB 100/0", "qos_99.99", "1")]["value"])
    second = rows[("RND 4KiB 100/0", "qos_99.99", "2")]
    assert first > 0 and float(second["value"]) == pytest.approx(first * 1.1, rel=0.02)
    assert rows[("RND 8KiB 0/100", "qos_99.999", "1")]["value"] == ""     # not resolvable
    text = " ".join(pdf_text(out / "compare.pdf").split())
    assert "99.9999 % response time (QoS) (us), side by side" in text
    assert "n/r = not resolvable" in text and "99.999 % needs 100,000" in text
