"""`python -m pts history MODEL --firmware A --firmware B --gate` (issue 50 §4) on hand-built
run sets with known answers (tests/support/synthetic/history_lab.py's lab_run: a run whose
cells have the IOPS chosen here, so the index's figure is exactly that number): identical
firmwares pass (0), one cell shifted beyond its margin is named (1), every cell shifted
within it passes (0), one run a side is inconclusive with the runs to add named (3), bad
input is refused (2). The thresholds with values on both sides: the margin (a change of
4.9 % against the built-in 5 % and a file's 4.8 %), the level (0.99 and 1.01 x a Holm p
computed here by hand); paired by drive (the same serials on both sides) and unpaired
(Welch); SQLite and PostgreSQL give the same answers. With --ocptv (pts/index/gate_ocptv.py)
the same answers as OCPTV lines, each checked against the OCPTV 2.0 schema as a run's export
is (tests/support/ocptv_schema.py): PASS, FAIL naming the cell, NOT_APPLICABLE with the runs
to add."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
import statistics

import pytest
from scipy.stats import t as student_t

from pts.cli.main import main
from pts.config import margins as margins_mod
from pts.index import build, db, gate_plan, gate_store, history, history_gate
from tests.support.ocptv_schema import (
    check_lines,
    run_artifacts,
    schema_validator,
    step_artifacts,
)
from tests.support.synthetic.history_lab import LABEL, M, R, W, base, lab_run

A_W = [40000.0, 40400.0, 39600.0]
SAME, DROP, EDGE, WITHIN, ONE = ("Gate Same", "Gate Drop", "Gate Edge", "Gate Within",
                                 "Gate One")
DROP_W = [36000.0, 36500.0, 35700.0]            # about -10 % on each drive
EDGE_W = 40000 * (1 - 0.049)                     # -4.9 %, no spread: exact
WITHIN_JITTER = (1.002, 0.998, 1.0)              # -3 % on each drive, a little spread
CELLS = 6                                        # the IOPS test's cells (0.5 KiB is N/A)
W_LABEL = f"iops {LABEL[W]}"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """Five models, each firmware FW-A then FW-B (a run a day), indexed once."""
    root = tmp_path_factory.mktemp("gate") / "reports"
    day = iter(range(1, 29))

    def runs(model, serials, firmware, cells_of):
        for k, serial in enumerate(serials):
            lab_run(root, model, serial, firmware, next(day), cells_of(k))

    # identical: B's runs give A's values, on other drives (unpaired)
    runs(SAME, ["SN-A1", "SN-A2", "SN-A3"], "FW-A", lambda k: {W: A_W[k]})
    runs(SAME, ["SN-B1", "SN-B2", "SN-B3"], "FW-B", lambda k: {W: A_W[k]})
    day = iter(range(1, 29))
    # one cell about 10 % down on the same three drives (paired)
    runs(DROP, ["SN-1", "SN-2", "SN-3"], "FW-A", lambda k: {W: A_W[k]})
    runs(DROP, ["SN-1", "SN-2", "SN-3"], "FW-B", lambda k: {W: DROP_W[k]})
    day = iter(range(1, 29))
    # one cell 4.9 % down, the same value in every run (no spread: the margin decides alone)
    runs(EDGE, ["SN-1", "SN-2"], "FW-A", lambda k: {W: 40000})
    runs(EDGE, ["SN-1", "SN-2"], "FW-B", lambda k: {W: EDGE_W})
    day = iter(range(1, 29))
    # every 4KiB cell 3 % down (within the 5 % margin), paired
    runs(WITHIN, ["SN-1", "SN-2", "SN-3"], "FW-A",
         lambda k: {c: base(c) * A_W[k] / 40000 for c in (W, R, M)})
    runs(WITHIN, ["SN-1", "SN-2", "SN-3"], "FW-B",
         lambda k: {c: base(c) * A_W[k] / 40000 * 0.97 * WITHIN_JITTER[k] for c in (W, R, M)})
    day = iter(range(1, 29))
    runs(ONE, ["SN-1"], "FW-A", lambda k: {W: 40000})
    runs(ONE, ["SN-2"], "FW-B", lambda k: {W: 30000})
    conn = db.connect(root / db.FILE_NAME)
    try:
        assert len(build.update(conn, [root]).added) == 24
    finally:
        conn.close()
    return root


def gate(lab, model, *extra, index=None):
    return main(["history", model, "--firmware", "FW-A", "--firmware", "FW-B", "--gate",
                 "--index", index or str(lab), *extra])


def answer(lab, capsys, model, *extra, status, index=None) -> dict:
    assert gate(lab, model, "--json", *extra, index=index) == status
    return json.loads(capsys.readouterr().out)


def cell(doc: dict, name: str = W_LABEL) -> dict:
    return next(c for c in doc["cells"] if c["name"] == name)


def test_identical_firmwares_pass_unpaired(lab, capsys):
    doc = answer(lab, capsys, SAME, status=0)
    assert (doc["answer"], doc["regressed"], doc["inconclusive"]) == ("pass", [], [])
    assert len(doc["cells"]) == CELLS
    w = cell(doc)
    assert (w["verdict"], w["method"], w["n_a"], w["n_b"]) == \
        ("equivalent", "unpaired (Welch)", 3, 3)
    # by hand: the same values on each side, so the gain is 0 and Welch's standard error is
    # sqrt(2 s^2 / 3) on the logs with df = 4; the TOST's p at the nearer (upper) bound
    y = [math.log(v) for v in A_W]
    mean = sum(y) / 3
    se = math.sqrt(2 * sum((v - mean) ** 2 for v in y) / 2 / 3)
    p = max(student_t.sf(-math.log(0.95) / se, 4), student_t.sf(math.log(1.05) / se, 4))
    assert w["change"] == pytest.approx(0, abs=1e-12)
    assert w["p_equivalent"] == pytest.approx(p, rel=1e-9) and p < 0.05
    # the other cells: the same value in every run, exactly equal
    assert {c["verdict"] for c in doc["cells"]} == {"equivalent"}
    gate(lab, SAME)
    out = capsys.readouterr().out
    assert "gate: pass (exit 0): pass: every cell no worse than its margin (level 0.05)" in out
    assert f"  {W_LABEL}  |  equivalent  |  unpaired (Welch)  |  3, 3  |  +0.00 %" in out


def hand_holm_p_worse() -> float:
    """DROP's W cell: the paired differences of the logs, a one-sample t at the worse bound
    log(0.95) (df 2), Holm's factor 12 (2 claims x 6 cells; the smallest p of the twelve:
    the other cells have the same value in every run, p 1)."""
    d = [math.log(b / a) for a, b in zip(A_W, DROP_W, strict=True)]
    mean = sum(d) / 3
    se = math.sqrt(sum((x - mean) ** 2 for x in d) / 2 / 3)
    return 2 * CELLS * student_t.cdf((mean - math.log(0.95)) / se, 2)


def test_one_cell_beyond_its_margin_is_named_and_exits_1(lab, capsys):
    doc = answer(lab, capsys, DROP, status=1)
    assert (doc["answer"], doc["regressed"]) == ("regressed", [W_LABEL])
    w = cell(doc)
    assert (w["verdict"], w["method"]) == ("regressed", "paired by drive (3 drives)")
    p = hand_holm_p_worse()
    assert w["p_worse"] == pytest.approx(p, rel=1e-9)
    geo = math.exp(sum(math.log(b / a) for a, b in zip(A_W, DROP_W, strict=True)) / 3) - 1
    assert w["change"] == pytest.approx(geo, rel=1e-12)
    assert [c["verdict"] for c in doc["cells"] if c["name"] != W_LABEL] == ["equivalent"] * 5
    gate(lab, DROP)
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == f"gate: regressed (exit 1): regressed beyond its margin: {W_LABEL}"
    line = next(x for x in out if x.startswith(f"  {W_LABEL}  |"))
    assert f"regressed  |  paired by drive (3 drives)  |  3, 3  |  {geo * 100:+.2f} %" in line
    assert f"{p:.3g}, 1  |  -" in line and "5 %, built in" in line


def test_the_level_decides_at_the_hand_computed_holm_p(lab, capsys):
    p = hand_holm_p_worse()
    assert 0.001 < p < 0.05
    assert cell(answer(lab, capsys, DROP, "--level", f"{p * 1.01:.6g}", status=1))[
        "verdict"] == "regressed"
    doc = answer(lab, capsys, DROP, "--level", f"{p * 0.99:.6g}", status=3)
    assert cell(doc)["verdict"] == "inconclusive" and doc["inconclusive"] == [W_LABEL]


def test_the_margin_decides_a_change_of_4_9_percent(lab, tmp_path, capsys):
    doc = answer(lab, capsys, EDGE, status=0)          # built in: iops 5 %
    assert (cell(doc)["verdict"], cell(doc)["method"]) == ("equivalent", "no spread")
    assert cell(doc)["change"] == pytest.approx(-0.049, rel=1e-9)
    tight = tmp_path / "margins.toml"
    tight.write_text('[metric]\niops = { percent = 4.8, why = "our SLA" }\n')
    doc = answer(lab, capsys, EDGE, "--margins", str(tight), status=1)
    assert doc["regressed"] == [W_LABEL] and cell(doc)["margin"] == pytest.approx(0.048)
    assert (cell(doc)["margin_source"], cell(doc)["margin_why"]) == \
        (f"{tight} line 2", "our SLA")
    tight.write_text("[metric]\niops = 5.0\n")
    assert answer(lab, capsys, EDGE, "--margins", str(tight), status=0)["answer"] == "pass"


def test_every_cell_shifted_within_its_margin_passes(lab, tmp_path, capsys):
    doc = answer(lab, capsys, WITHIN, status=0)
    shifted = {f"iops {LABEL[c]}" for c in (W, R, M)}
    for c in doc["cells"]:
        assert c["verdict"] == "equivalent", c
        if c["name"] in shifted:
            assert c["change"] == pytest.approx(-0.03, abs=0.002) and c["method"] == \
                "paired by drive (3 drives)"
    # a 2.9 % margin: the -3 % change is about it, neither within nor beyond: inconclusive,
    # and the planner names the runs a side that would decide it
    tight = tmp_path / "margins.toml"
    tight.write_text("[metric]\niops = 2.9\n")
    doc = answer(lab, capsys, WITHIN, "--margins", str(tight), status=3)
    assert set(doc["inconclusive"]) == shifted
    assert cell(doc)["why"].startswith("neither within nor beyond its 2.9% margin")
    # by hand: the per-drive differences of the logs are log(0.97 x jitter), the same in the
    # three cells; the gain lies beyond the worse bound, so the planner is asked for the runs
    # that show it worse at the level over the 6 cells (gate_plan's noncentral t)
    d = [math.log(0.97 * j) for j in WITHIN_JITTER]
    gain, sd = statistics.fmean(d), statistics.stdev(d)
    assert gain < math.log(1 - 0.029)
    runs = gate_plan.runs_a_side(math.log(1 - 0.029) - gain, sd, 0.05 / CELLS, 0.9, True) - 3
    assert doc["runs_to_add"] == [[c, runs] for c in doc["inconclusive"]] and runs == 51
    assert doc["summary"].endswith(f"; add {runs} run(s) a side")


def test_one_run_a_side_is_inconclusive_with_the_runs_to_add(lab, capsys):
    doc = answer(lab, capsys, ONE, status=3)
    assert doc["answer"] == "inconclusive" and len(doc["inconclusive"]) == CELLS
    assert doc["runs_to_add"] == [[c["name"], 1] for c in doc["cells"]]
    assert cell(doc)["change"] == pytest.approx(-0.25) and cell(doc)["p_worse"] is None
    gate(lab, ONE)
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("gate: inconclusive (exit 3): inconclusive: 6 cell(s) not decided")
    assert last.endswith("; add 1 run(s) a side")


@pytest.mark.parametrize("args, says", [
    ([SAME, "--gate"], "--gate compares two firmwares, 0 given: give --firmware A"),
    ([SAME, "--gate", "--firmware", "FW-A"], "--gate compares two firmwares, 1 given"),
    ([SAME, "--firmware", "FW-A", "--firmware", "FW-B", "--margins", "m.toml"],
     "--margins is read by the release gate only: add --gate"),
    (["No Such Drive", "--gate", "--firmware", "FW-A", "--firmware", "FW-B"],
     "no run of model 'No Such Drive' in the index"),
    ([SAME, "--gate", "--firmware", "FW-A", "--firmware", "FW-B", "--level", "0.6"],
     "the level must be between 0 and 0.5, not 0.6"),
    ([SAME, "--gate", "--firmware", "FW-A", "--firmware", "FW-B", "--margins", "BAD"],
     "line 2: [metric] iops = 0.05 %: a margin is between 0.1 and 50 percent (did you mean "
     "5 for 5%?)"),
    ([SAME, "--gate", "--firmware", "FW-A", "--firmware", "FW-B", "--margins", "MISSING"],
     "cannot read margins file"),
])
def test_bad_input_exits_2_naming_the_problem(lab, tmp_path, capsys, args, says):
    bad = tmp_path / "bad.toml"
    bad.write_text("[metric]\niops = 0.05\n")
    args = [str(bad) if a == "BAD" else str(tmp_path / "none.toml") if a == "MISSING" else a
            for a in args]
    assert main(["history", *args, "--index", str(lab)]) == 2
    captured = capsys.readouterr()
    assert says in captured.err and captured.out == ""


def test_sqlite_and_postgresql_give_the_same_answers(lab, backend, capsys):
    where = str(lab)
    if backend.url is not None:
        pg = backend.connect(lab)
        try:
            build.update(pg, [lab])
        finally:
            pg.close()
        where = backend.url
    expected = {SAME: 0, DROP: 1, EDGE: 0, WITHIN: 0, ONE: 3}
    found = {m: answer(lab, capsys, m, status=s, index=where) for m, s in expected.items()}
    conn = db.connect(lab / db.FILE_NAME)
    try:
        for model, doc in found.items():
            h = history.history(conn, model, ("FW-A", "FW-B"))
            assert doc == json.loads(json.dumps(history_gate.pair_gate(h).as_data()))
    finally:
        conn.close()


def test_the_index_keeps_the_gates_answer_on_both_backends(lab, backend, tmp_path):
    """build.update keeps each model's answer for its two newest firmwares (release_gates,
    migration 3), the same on SQLite and PostgreSQL, equal to the one worked out from the
    history; margins of a file are kept apart (the 4.8 % / built-in 5 % sides of EDGE's
    -4.9 %); the table is a view: emptied, the next update (nothing changed) fills it again."""
    root = str(lab.resolve())
    conn = backend.connect(lab)
    try:
        if backend.url is not None:
            build.update(conn, [lab])
        kept = {g.model: g for g in gate_store.stored(conn, root)}
        assert {m: g.status for m, g in kept.items()} == \
            {SAME: 0, DROP: 1, EDGE: 0, WITHIN: 0, ONE: 3}
        for model, g in kept.items():
            h = history.history(conn, model, ("FW-A", "FW-B"), root=root)
            assert (g.a, g.b, g.margins, g.level) == ("FW-A", "FW-B", "built in", 0.05)
            assert g.gate == history_gate.pair_gate(h), model
            assert (g.answer, g.summary) == (g.gate.answer.answer, g.gate.answer.summary)
        tight_file = tmp_path / "margins.toml"
        tight_file.write_text('[metric]\niops = { percent = 4.8, why = "our SLA" }\n')
        tight = margins_mod.load(tight_file)
        assert gate_store.refresh(conn, root, tight) == 5
        (edge,) = gate_store.stored(conn, root, tight, EDGE)
        assert (edge.status, edge.gate.answer.regressed) == (1, (W_LABEL,))
        assert gate_store.stored(conn, root, None, EDGE)[0].status == 0     # built in: kept
        with db.transaction(conn):
            conn.execute("DELETE FROM release_gates")
        assert build.update(conn, [lab]).line().startswith("nothing changed")
        def timeless(found):
            return {g.model: dataclasses.replace(g, computed_at=0) for g in found}
        assert timeless(gate_store.stored(conn, root)) == timeless(kept.values())
    finally:
        conn.close()


def test_the_kept_answer_follows_the_folders(tmp_path):
    """A model's answer is worked out again when its folders change: none with one firmware,
    regressed (1) once B's runs 10 % down are added, none again when they are removed."""
    root = tmp_path / "reports"
    day = iter(range(1, 29))
    for k, serial in enumerate(["SN-1", "SN-2", "SN-3"]):
        lab_run(root, DROP, serial, "FW-A", next(day), {W: A_W[k]})
    conn = db.connect(root / db.FILE_NAME)
    try:
        build.update(conn, [root])
        assert gate_store.stored(conn, str(root.resolve())) == []
        added = [lab_run(root, DROP, serial, "FW-B", next(day), {W: DROP_W[k]})
                 for k, serial in enumerate(["SN-1", "SN-2", "SN-3"])]
        build.update(conn, [root])
        (g,) = gate_store.stored(conn, str(root.resolve()))
        assert (g.status, g.answer, g.gate.answer.regressed) == (1, "regressed", (W_LABEL,))
        for folder in added:
            shutil.rmtree(folder)
        assert len(build.update(conn, [root]).dropped) == 3
        assert gate_store.stored(conn, str(root.resolve())) == []
    finally:
        conn.close()


# ------------------------------------------------- the answer as OCPTV (--gate --ocptv)

@pytest.fixture(scope="module")
def validator():
    return schema_validator()


def ocptv_stream(root, capsys, model, schema, status, *extra) -> list[dict]:
    args = ["history", model, "--firmware", "FW-A", "--firmware", "FW-B", "--gate",
            "--index", str(root), *extra]
    assert main([*args, "--ocptv"]) == status
    out = capsys.readouterr().out
    assert out.endswith("\n")
    found = [json.loads(line) for line in out.splitlines()]
    check_lines(found, schema)
    assert main([*args, "--json"]) == status            # the same answer as --json's
    doc = json.loads(capsys.readouterr().out)
    (start,) = run_artifacts(found, "testRunStart")
    assert start["name"] == "release gate"
    assert {k: start["parameters"][k] for k in ("model", "firmware_a", "firmware_b", "level")}\
        == {"model": model, "firmware_a": "FW-A", "firmware_b": "FW-B", "level": 0.05}
    assert start["parameters"]["margins_percent"] == {c["name"]: c["margin_percent"]
                                                      for c in doc["cells"]}
    assert [s["version"] for s in start["dutInfo"]["softwareInfos"]] == ["FW-A", "FW-B"]
    diagnoses = step_artifacts(found, "diagnosis")
    assert [(d["verdict"], d["message"].split(":")[0]) for d in diagnoses] == \
        [(c["verdict"], c["name"]) for c in doc["cells"]]
    assert len(diagnoses) == CELLS
    (summary,) = [x["message"] for x in run_artifacts(found, "log")
                  if x["message"].startswith("gate: ")]
    assert summary == f"gate: {doc['answer']} (exit {status}): {doc['summary']}"
    return found


def run_end(found) -> dict:
    (last,) = run_artifacts(found, "testRunEnd")
    assert found[-1]["testRunArtifact"]["testRunEnd"] == last
    return last


def test_ocptv_identical_firmwares_pass(lab, capsys, validator):
    found = ocptv_stream(lab, capsys, SAME, validator, 0)
    assert run_end(found) == {"status": "COMPLETE", "result": "PASS"}
    assert {(d["verdict"], d["type"]) for d in step_artifacts(found, "diagnosis")} == \
        {("equivalent", "PASS")}
    serials = [h["serialNumber"] for h in run_artifacts(found, "testRunStart")[0]["dutInfo"]
               ["hardwareInfos"]]
    assert serials == ["SN-A1", "SN-A2", "SN-A3", "SN-B1", "SN-B2", "SN-B3"]


def test_ocptv_one_cell_beyond_its_margin_fails_naming_it(lab, capsys, validator):
    found = ocptv_stream(lab, capsys, DROP, validator, 1)
    assert run_end(found) == {"status": "COMPLETE", "result": "FAIL"}
    failed = [d for d in step_artifacts(found, "diagnosis") if d["type"] == "FAIL"]
    assert [(d["verdict"], d["message"].split(":")[0]) for d in failed] == \
        [("regressed", W_LABEL)]
    p = hand_holm_p_worse()
    assert f"Holm p worse {p:.3g}, better 1" in failed[0]["message"]
    assert "regressed (paired by drive (3 drives)); runs A 3, B 3" in failed[0]["message"]
    (m,) = [x for x in step_artifacts(found, "measurement")
            if x["name"] == f"{W_LABEL}: B / A - 1"]
    assert m["metadata"]["holm_p_worse"] == pytest.approx(p, rel=1e-9)
    assert m["metadata"]["margin"] == pytest.approx(0.05) and m["value"] < -0.05
    assert run_artifacts(found, "log")[-1]["message"].endswith(
        f"regressed beyond its margin: {W_LABEL}")


def test_ocptv_inconclusive_names_the_runs_to_add(lab, tmp_path, capsys, validator):
    found = ocptv_stream(lab, capsys, ONE, validator, 3)
    assert run_end(found) == {"status": "COMPLETE", "result": "NOT_APPLICABLE"}
    diagnoses = step_artifacts(found, "diagnosis")
    assert {(d["verdict"], d["type"]) for d in diagnoses} == {("inconclusive", "UNKNOWN")}
    assert all("runs to add 1 more a side" in d["message"] for d in diagnoses)
    assert run_artifacts(found, "log")[-1]["message"].endswith("; add 1 run(s) a side")
    # the planner's runs at the observed spread (51: test_every_cell_shifted_within_its_...)
    # and a file's margin, with its source, in the stream
    tight = tmp_path / "margins.toml"
    tight.write_text("[metric]\niops = 2.9\n")
    found = ocptv_stream(lab, capsys, WITHIN, validator, 3, "--margins", str(tight))
    assert run_end(found)["result"] == "NOT_APPLICABLE"
    (w,) = [d for d in step_artifacts(found, "diagnosis") if d["message"].startswith(W_LABEL)]
    assert w["verdict"] == "inconclusive" and "runs to add 51 more a side" in w["message"]
    assert f"margin 2.9 % ({tight} line 2)" in w["message"]
    start = run_artifacts(found, "testRunStart")[0]
    assert start["parameters"]["margins_percent"][W_LABEL] == 2.9
    assert start["metadata"]["margins"][W_LABEL]["source"] == f"{tight} line 2"
    assert run_artifacts(found, "log")[-1]["message"].endswith("; add 51 run(s) a side")


@pytest.mark.parametrize("extra, says", [
    (["--json"], "--ocptv and --json are two forms of the answer: give one"),
    ([], None)])
def test_ocptv_needs_the_gate_and_one_form(lab, capsys, extra, says):
    if says is None:        # without --gate
        assert main(["history", SAME, "--firmware", "FW-A", "--firmware", "FW-B", "--ocptv",
                     "--index", str(lab)]) == 2
        says = "--ocptv writes the release gate's answer: add --gate"
    else:
        assert main(["history", SAME, "--firmware", "FW-A", "--firmware", "FW-B", "--gate",
                     "--ocptv", *extra, "--index", str(lab)]) == 2
    captured = capsys.readouterr()
    assert says in captured.err and captured.out == ""
