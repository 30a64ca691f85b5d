"""`pts.index.history` and `python -m pts history` on the synthetic lab
(tests/support/synthetic/history_lab.py): the firmware verdicts against means, standard
deviations and Welch p-values computed here by hand (the formulas written out, Student's t
distribution from scipy); one run a side: spread unknown; the better direction per metric;
change points where planted and none on flat data; the command's output and its refusals;
SQLite and PostgreSQL (tests/index/conftest.py's server) giving the same answers."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from scipy.stats import t as student_t

from pts.cli.main import main
from pts.index import changepoints, db, history
from pts.index.history import (
    IMPROVED,
    NO_CHANGE,
    REGRESSED,
    SPREAD_UNKNOWN,
    Figure,
    Spread,
)
from tests.support.postgres import NEEDS_POSTGRESQL
from tests.support.synthetic.history_lab import (
    LAB_X,
    LAB_Y,
    LABEL,
    X_VALUES,
    M,
    R,
    W,
    base,
    indexed_lab,
)

AB = ("FW-A", "FW-B")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """The synthetic lab's REPORTS_DIR (history_lab.py), indexed: built once per module."""
    return indexed_lab(tmp_path_factory.mktemp("lab") / "reports")


@pytest.fixture
def index(lab):
    conn = db.connect(lab / db.FILE_NAME)
    yield conn
    conn.close()


def by_cell(h: history.History) -> dict[str, history.Verdict]:
    return {v.cell: v for v in h.verdicts}


def hand(a: list[float], b: list[float]) -> tuple[float, float, float, float, float]:
    """Means, sample standard deviations and Welch's two-sided p, written out: t = (mean_b -
    mean_a) / sqrt(s_a^2/n_a + s_b^2/n_b), Welch-Satterthwaite degrees of freedom."""
    na, nb = len(a), len(b)
    ma, mb = sum(a) / na, sum(b) / nb
    va = sum((x - ma) ** 2 for x in a) / (na - 1)
    vb = sum((x - mb) ** 2 for x in b) / (nb - 1)
    se2 = va / na + vb / nb
    t = (mb - ma) / math.sqrt(se2)
    df = se2 ** 2 / ((va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1))
    return ma, mb, math.sqrt(va), math.sqrt(vb), 2 * student_t.sf(abs(t), df)


def test_firmware_verdicts_against_hand_computed_welch(index):
    h = history.history(index, LAB_X, AB)
    assert (h.a, h.b, h.level) == ("FW-A", "FW-B", 0.05)
    found = by_cell(h)
    expected = {W: REGRESSED, R: IMPROVED, M: NO_CHANGE}
    for cell, verdict in expected.items():
        a, b = X_VALUES["FW-A"][cell], X_VALUES["FW-B"][cell]
        ma, mb, sa, sb, p = hand(a, b)
        v = found[LABEL[cell]]
        assert v.verdict == verdict, (cell, v)
        assert (v.a.n, v.b.n) == (5, 5)
        assert v.a.mean == pytest.approx(ma, rel=1e-12)
        assert v.b.mean == pytest.approx(mb, rel=1e-12)
        assert v.a.std == pytest.approx(sa, rel=1e-12)
        assert v.b.std == pytest.approx(sb, rel=1e-12)
        assert v.p_value == pytest.approx(p, rel=1e-9)
        assert v.change_pct == pytest.approx((mb - ma) / ma * 100, rel=1e-12)
    # by hand: W 40000 -> 36000, R 100000 -> 110000 (p ~ 4e-8); M +100 IOPS (p ~ 0.75)
    assert found[LABEL[W]].change_pct == pytest.approx(-10.0)
    assert found[LABEL[M]].p_value > 0.5
    # the 1024KiB cells: the same value in every run, no spread: equal means, p = 1
    flat = found[LABEL[("0/100", 1048576)]]
    assert (flat.verdict, flat.p_value, flat.a.std, flat.a.mean) == \
        (NO_CHANGE, 1.0, 0.0, base(("0/100", 1048576)))


def test_b_against_a_swaps_the_verdicts(index):
    found = by_cell(history.history(index, LAB_X, AB[::-1]))
    assert (found[LABEL[W]].verdict, found[LABEL[R]].verdict,
            found[LABEL[M]].verdict) == (IMPROVED, REGRESSED, NO_CHANGE)


def test_one_run_a_side_says_the_spread_is_unknown(index):
    h = history.history(index, LAB_Y, AB)
    assert h.verdicts and all(v.verdict == SPREAD_UNKNOWN and v.p_value is None
                              and v.a.std is None and v.b.std is None and v.a.n == 1
                              for v in h.verdicts)
    w = by_cell(h)[LABEL[W]]                 # 40000 -> 30000: a difference, not a claim
    assert (w.a.mean, w.b.mean, w.change_pct) == (40000.0, 30000.0, -25.0)


def test_lower_is_better_for_latencies_and_no_direction_is_changed():
    runs = {n: "A" if n <= 3 else "B" for n in range(1, 7)}

    def verdict(metric: str, unit: str, a: list[float], b: list[float]) -> str:
        values = tuple(enumerate(a + b, 1))
        f = Figure("latency", metric, "RND 4KiB 0/100", unit, values,
                   (("A", Spread.of(a)), ("B", Spread.of(b))), Spread.of(a + b), 0, ())
        return history.judge(f, runs, "A", "B", 0.05).verdict

    slower, faster = [100.0, 101.0, 99.0], [80.0, 81.0, 79.0]
    assert verdict("lat_mean_us", "us", slower, faster) == IMPROVED
    assert verdict("lat_max_us", "us", faster, slower) == REGRESSED
    assert verdict("waf", "ratio", faster, slower) == REGRESSED
    assert verdict("mbps", "MB/s", faster, slower) == IMPROVED
    assert verdict("fob_ss_ratio", "ratio", faster, slower) == history.CHANGED
    assert verdict("new_metric_us", "us", faster, slower) == REGRESSED    # by its unit


def test_change_points_found_where_planted_and_none_on_flat_data():
    rng = np.random.default_rng(5)
    step = np.r_[40000 + rng.normal(0, 300, 8), 36000 + rng.normal(0, 300, 8)]
    assert [c.index for c in changepoints.find(step, 0.05)] == [8]
    two = np.r_[step, 38000 + rng.normal(0, 300, 8)]
    found = changepoints.find(two, 0.05)
    assert [c.index for c in found] == [8, 16]
    assert found[0].p_value <= 0.05 and found[1].mean_after == pytest.approx(38000, rel=0.01)
    assert changepoints.find(40000 + rng.normal(0, 300, 16), 0.05) == []
    assert changepoints.find([3000.0] * 10, 0.05) == []
    assert changepoints.find([1.0, 2.0, 3.0], 0.05) == []           # too short to split


def test_the_labs_change_points_are_the_firmware_change(index):
    figures = {f.cell: f for f in history.history(index, LAB_X).figures}
    for cell in (W, R):
        f = figures[LABEL[cell]]
        assert [lv.run for lv in f.levels] == [6], f.levels       # run 6: FW-B's first
        assert f.levels[0].mean_before == pytest.approx(np.mean(X_VALUES["FW-A"][cell]))
        assert f.levels[0].p_value <= 0.05
    assert figures[LABEL[M]].levels == () and figures[LABEL[("0/100", 1048576)]].levels == ()


def test_runs_by_firmware_and_sample_in_time_order(index):
    h = history.history(index, LAB_X)
    assert [(r.number, r.firmware, r.serial) for r in h.runs] == \
        [(k + 1, "FW-A" if k < 5 else "FW-B", f"SN-{k % 5 + 1}") for k in range(10)]
    assert h.firmwares == AB and h.verdicts == ()
    f = next(f for f in h.figures if f.cell == LABEL[W])
    assert [v for _, v in f.values] == X_VALUES["FW-A"][W] + X_VALUES["FW-B"][W]
    assert dict(f.by_firmware)["FW-B"].mean == pytest.approx(36000)
    only_b = history.history(index, LAB_X, ["FW-B"])
    assert {r.firmware for r in only_b.runs} == {"FW-B"}


def test_the_command_answers_as_the_function(lab, index, capsys):
    args = ["history", LAB_X, "--firmware", "FW-A", "--firmware", "FW-B", "--index", str(lab)]
    assert main(args + ["--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc == json.loads(json.dumps(dataclasses.asdict(history.history(index, LAB_X, AB))))
    assert main(args + ["--test", "iops"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if f"{LABEL[W]} (IOPS)  |" in x)
    assert "regressed" in line and "-10.00 %" in line and "mean 40000, std 316.2, n 5" in line
    assert "mean 36000, std 707.1, n 5" in line
    assert "change point: run #6 starts a new level: 40000 -> 36000" in out
    assert "Welch's t-test" in out


@pytest.mark.parametrize("extra, says", [
    (["NoSuchModel"], f"no run of model 'NoSuchModel' in the index (the model as the runs "
                      f"list shows it, exactly; models indexed, with their runs: {LAB_X} (10)"),
    ([LAB_X, "--firmware", "FW-Z"], "has no run of firmware FW-Z"),
    ([LAB_X, "--firmware", "FW-A", "--firmware", "FW-A"], "A and B must differ"),
    ([LAB_X, "--firmware", "A", "--firmware", "B", "--firmware", "C"], "give one"),
    ([LAB_X, "--level", "5"], "between 0 and 1"),
])
def test_bad_input_is_refused_with_the_reason(lab, capsys, extra, says):
    assert main(["history", *extra, "--index", str(lab)]) == 2
    assert says in capsys.readouterr().err


def test_no_index_is_refused_with_how_to_make_one(tmp_path, capsys):
    assert main(["history", LAB_X, "--index", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"no results index at {tmp_path / 'index.sqlite'}" in err and "pts index" in err
    assert not (tmp_path / "index.sqlite").exists()         # never made by history


@NEEDS_POSTGRESQL
def test_sqlite_and_postgresql_give_the_same_history(lab, index, pg_server, capsys):
    from pts.index import build, target
    url = pg_server.database()
    pg = target.connect(url)
    try:
        build.update(pg, [lab])
        for model in (LAB_X, LAB_Y):
            assert history.history(pg, model, AB) == history.history(index, model, AB)
        # a model is matched exactly on both (SQLite's LIKE and = on text would differ)
        refused = []
        for conn in (pg, index):
            with pytest.raises(history.HistoryError) as exc:
                history.history(conn, LAB_X.lower())
            refused.append(str(exc.value))
        assert refused[0] == refused[1]
        assert history.history(pg, LAB_X).figures[0].values
    finally:
        pg.close()
    # the command, given the URL, prints what it prints from the SQLite file
    answers = []
    for where in (url, str(lab)):
        assert main(["history", LAB_X, "--firmware", "FW-A", "--firmware", "FW-B",
                     "--index", where, "--json"]) == 0
        answers.append(json.loads(capsys.readouterr().out))
    assert answers[0] == answers[1] and answers[0]["verdicts"]


def test_spec_and_host_keep_their_runs_and_a_mix_is_said(tmp_path, capsys):
    """Two runs of one spec and host, one of a quick spec on another host: the history of
    all three says both mixes and names the filters; --spec / --host keep their runs only;
    a spec the model has no run of is refused with the ones it has."""
    from tests.support.synthetic.history_lab import lab_run
    root = tmp_path / "reports"
    folders = [lab_run(root, "LabDrive Z3", f"SN-{d}", "FW-A", d, {W: 40000 + d})
               for d in (1, 2, 3)]
    info = json.loads((folders[2] / "run.json").read_text())
    full = info["spec"]["name"]
    info["spec"]["name"], info["platform"]["hostname"] = "pts-quick", "otherhost"
    (folders[2] / "run.json").write_text(json.dumps(info))
    conn = db.connect(root / db.FILE_NAME)
    from pts.index import build
    build.update(conn, [root])
    try:
        h = history.history(conn, "LabDrive Z3")
        assert f"the figures mix runs of 2 specs: {full} (2), pts-quick (1); give --spec" \
            in " ".join(h.notes)
        assert "the figures mix runs of 2 hosts: otherhost (1), testhost (2); give --host" \
            in " ".join(h.notes)
        one = history.history(conn, "LabDrive Z3", spec=full)
        assert [r.serial for r in one.runs] == ["SN-1", "SN-2"] and one.notes == ()
        w = next(f for f in one.figures if f.cell == LABEL[W] and f.metric == "iops")
        assert [v for _, v in w.values] == [40001.0, 40002.0]
        assert [r.serial for r in history.history(conn, "LabDrive Z3",
                                                  host="otherhost").runs] == ["SN-3"]
        with pytest.raises(history.HistoryError, match=f"no run of spec 'x' in the index "
                                                       f"\\(its specs: {full}, pts-quick\\)"):
            history.history(conn, "LabDrive Z3", spec="x")
    finally:
        conn.close()
    assert main(["history", "LabDrive Z3", "--index", str(root), "--spec", "pts-quick"]) == 0
    assert "3 runs" not in (out := capsys.readouterr().out) and "1 runs" in out


def test_change_points_are_found_once_per_history_in_a_process(index, monkeypatch):
    """The history page asks for every figure's change points at every visit: the answer
    (Holm over all the figures, a function of the values alone) is kept per history and
    level; the same as holm's."""
    calls = []
    real = changepoints.holm
    monkeypatch.setattr(changepoints, "holm", lambda v, lv: calls.append(v) or real(v, lv))
    changepoints.holm_cached.cache_clear()
    first = history.history(index, LAB_X)
    assert len(calls) == 1 and len(calls[0]) == len(first.figures) > 0
    again = history.history(index, LAB_X)
    assert len(calls) == 1 and again.figures == first.figures
    w = next(f for f in first.figures if f.cell == LABEL[W] and f.metric == "iops")
    k = [f.label for f in first.figures].index(w.label)
    assert [lv.run for lv in w.levels] == [c.index + 1 for c in real(
        calls[0], history.LEVEL)[k]] == [6]
