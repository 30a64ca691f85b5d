"""test_start `parameters` as a typed record (pts.results.parameters): every family's stored
object reads as its record and gives back the same object (names and order), the old names
of --point-seconds still read, and a name this version does not know, a family's required
option missing or a value of another type than its field's is refused with the option and
the test named (and the types), where the run is loaded; what every test writes, the RWSW
family's included, is its family's record."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from pts.config.settings import make_settings
from pts.config.spec import load_spec
from pts.results import parameters, records
from pts.stored.data import load_run
from pts.stored.model import RunFolderError
from pts.testdefs import (
    dirth_cbw_jobs,
    hir,
    iops,
    latency,
    registry,
    throughput,
    wsat,
    xsr,
)
from pts.testdefs.rwsw import dirth as rwsw_dirth
from pts.testdefs.rwsw import replay as rwsw_replay
from pts.testdefs.rwsw import streams as rwsw_streams
from pts.testdefs.rwsw import wsat as rwsw_wsat
from tests.support import rwsw
from tests.support.helpers import DATA
from tests.support.synthetic.synthrun import CAPACITY

REFERENCE = DATA / "reference-run"
FAMILIES = {"iops": parameters.RoundParameters, "throughput-1024k": parameters.RoundParameters,
            "throughput-128k": parameters.RoundParameters,
            "latency": parameters.RoundParameters, "wsat": parameters.WsatParameters,
            "hir": parameters.HirParameters, "xsr": parameters.XsrParameters,
            "dirth-precondition": parameters.DirthCbwParameters,
            "dirth": parameters.DirthCbwParameters,
            "cbw-precondition": parameters.DirthCbwParameters,
            "cbw": parameters.DirthCbwParameters}


def stored_starts() -> dict[str, dict]:
    """The reference run's test_start records as stored (raw JSON), by test."""
    lines = (REFERENCE / "ledger.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["test"]: r for r in map(json.loads, lines) if r["type"] == "test_start"}


def test_the_reference_run_holds_every_family():
    assert set(stored_starts()) == set(FAMILIES)


@pytest.mark.parametrize("test", sorted(FAMILIES))
def test_round_trip_dict_typed_dict_is_identical(test):
    raw = stored_starts()[test]
    rec = records.parse(raw)
    typed = rec.typed
    assert type(typed) is FAMILIES[test]
    back = typed.as_dict()
    assert back == rec.parameters
    assert list(back) == list(rec.parameters)                    # the order too
    assert json.dumps(rec.to_json(), sort_keys=True) == json.dumps(  # the ledger line unchanged
        {**raw, "parameters": parameters.current(raw["parameters"])}, sort_keys=True)
    for name, value in rec.parameters.items():                   # every option an attribute
        assert parameters.as_stored(getattr(typed, name)) == value, name
    for name, kind in (("tracking", parameters.Tracking), ("groups", parameters.XsrGroup)):
        rows = rec.parameters[name] if name in rec.parameters else []   # nested: typed
        assert [type(t) for t in getattr(typed, name, None) or []] == [kind] * len(rows), name
    if test == "xsr":
        assert [(g.group, g.pattern, g.seconds) for g in typed.groups][0] == (1, "seq", 1440)
    else:
        assert typed.tracking[0].label == rec.parameters["tracking"][0]["label"]
    assert typed.thread_count == raw["parameters"]["thread_count"]


def test_the_old_names_of_point_seconds_still_read():
    starts = stored_starts()
    assert "sample_seconds" in starts["wsat"]["parameters"]      # stored before the one name
    assert "interval_seconds" in starts["xsr"]["parameters"]
    assert records.parse(starts["wsat"]).typed.point_seconds == 60
    assert records.parse(starts["xsr"]).typed.point_seconds == 60
    assert "sample_seconds" not in records.parse(starts["wsat"]).typed.as_dict()


def test_an_unknown_option_is_refused_naming_it_and_the_record():
    raw = stored_starts()["hir"]
    newer = {**raw, "parameters": {**raw["parameters"], "idle_jitter_ms": 3}}
    with pytest.raises(parameters.ParametersError) as err:
        _ = records.parse(newer).typed
    text = str(err.value)
    assert '"idle_jitter_ms"' in text and "HirParameters" in text and '"hir"' in text
    assert "newer version" in text


def test_an_option_of_another_family_is_unknown():
    raw = stored_starts()["xsr"]
    with pytest.raises(parameters.ParametersError, match='"max_rounds".*XsrParameters'):
        parameters.typed("xsr", {**raw["parameters"], "max_rounds": 7})


@pytest.mark.parametrize("test,option", [("iops", "max_rounds"), ("wsat", "stop_hours"),
                                         ("hir", "idle_seconds"), ("xsr", "groups"),
                                         ("dirth", "thread_counts"), ("latency", "tracking"),
                                         ("cbw-precondition", "workload")])
def test_a_required_option_missing_is_refused(test, option):
    stored = dict(stored_starts()[test]["parameters"])
    del stored[option]
    with pytest.raises(parameters.ParametersError, match=f'have no "{option}"'):
        parameters.typed(test, stored)


def test_a_test_this_version_does_not_know_is_refused():
    with pytest.raises(parameters.ParametersError, match='"zns".*newer version'):
        parameters.typed("zns", {"thread_count": 1})


def test_loading_a_run_with_an_unknown_option_says_where(tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(REFERENCE, folder)
    ledger = folder / "ledger.jsonl"
    ledger.write_text(ledger.read_text(encoding="utf-8").replace(
        '"wait_state_names"', '"wait_state_labels"'), encoding="utf-8")
    with pytest.raises(RunFolderError) as err:
        load_run(folder)
    text = str(err.value)
    assert "ledger.jsonl line" in text and '"wait_state_labels"' in text
    assert "HirParameters" in text


def test_what_every_testdef_writes_is_its_familys_record():
    """The writers (pts/testdefs) and the records stay one schema: a new option written
    without its field in pts/results/parameters.py fails here, not in a stored run."""
    s = make_settings(load_spec("pts-2.0.2-enterprise"), device="/dev/x", destructive=True,
                      point_seconds=7, max_rounds=None, purge="auto", reports_dir="/tmp")
    device = SimpleNamespace(capacity_bytes=CAPACITY, logical_sector=512)
    w = dirth_cbw_jobs.workload(dirth_cbw_jobs.section(s, "cbw"), 512)
    every = {"iops": iops.parameters(s, CAPACITY), "latency": latency.parameters(s, CAPACITY),
             "throughput-1024k": throughput.parameters(s, 1 << 20, CAPACITY, "SEQ 1024KiB"),
             "wsat": wsat.parameters(SimpleNamespace(spec=s.spec), wsat.wsat_plan(s, device)),
             "hir": hir.parameters(s, CAPACITY), "xsr": xsr.parameters(s, CAPACITY),
             "cbw": dirth_cbw_jobs.parameters(s, "cbw", CAPACITY, w, [], dirth_cbw_jobs.WRITES)}
    for test, stored in every.items():
        assert parameters.typed(test, stored).as_dict() == stored, test


# the RWSW family (pts.testdefs.rwsw_*, their settings from specs/rwsw-*.toml through
# pts.config.spec_rwsw): an ATW of two streams with two capture steps, so rwsw-replay
# declares its steps (with the spec's default hold, "iolog") and rwsw-dirth its matrix
RWSW_ATW = rwsw.atw_text("two", (("RND", "R", "4KiB", 70.0), ("SEQ", "W", "128KiB", 30.0))) \
    + "".join(f"""
[[step]]
start_s = {start}
seconds = 2.0
oio = {oio}
iops = 1000.0
rt_mean_ms = 0.5
shares = {{ "RND 4K R" = 60.0, "SEQ 128K W" = 40.0 }}
""" for start, oio in ((0.0, 4), (2.0, 1)))
RWSW_DEVICE = SimpleNamespace(capacity_bytes=CAPACITY, logical_sector=512, path="/dev/x")


def rwsw_declarations(tmp_path):
    """Every RWSW test's declaration (their -preconditioning tests too), by ledger name."""
    s = rwsw.settings_with(tmp_path, RWSW_ATW, dirth_thread_counts="32,1",
                           dirth_queue_depths="32,1")
    made = [rwsw_wsat.declare(s, RWSW_DEVICE), rwsw_streams.declare(s, RWSW_DEVICE),
            rwsw_replay.declare_precondition(s, RWSW_DEVICE),
            rwsw_replay.declare(s, RWSW_DEVICE),
            rwsw_dirth.declare_precondition(s, RWSW_DEVICE),
            rwsw_dirth.declare(s, RWSW_DEVICE)]
    return {d.test: d for d in made}


def test_what_every_rwsw_testdef_writes_is_the_rwsw_record(tmp_path):
    """As above for the RWSW family: a new option an RWSW test records without its field in
    RwswParameters, or of another type than the field's, fails here."""
    every = rwsw_declarations(tmp_path)
    registered = {name for name in registry.TESTS if name.startswith("rwsw-")}
    assert registered <= set(every), "an RWSW test the guard does not declare"
    assert set(every) == registered | {"rwsw-replay-preconditioning",
                                       "rwsw-dirth-preconditioning"}
    for test, decl in every.items():
        typed = parameters.typed(test, decl.parameters)
        assert type(typed) is parameters.RwswParameters, test
        assert typed.as_dict() == decl.parameters, test
        assert list(typed.as_dict()) == list(decl.parameters), test
    # what sets the family apart is there (not an empty record passing by accident)
    assert every["rwsw-replay"].parameters["hold"] == "iolog"
    assert len(every["rwsw-replay"].parameters["steps"]) == 2
    assert every["rwsw-dirth"].parameters["matrix"] == [[32, 32], [32, 1], [1, 32], [1, 1]]
    assert every["rwsw-wsat"].parameters["stop_hours"] > 0
    replay = parameters.typed("rwsw-replay", every["rwsw-replay"].parameters)  # nested: typed
    assert [(s.step, s.oio, s.seconds) for s in replay.steps] == [(1, 4, 2.0), (2, 1, 2.0)]
    assert [(s.stream, s.share_pct) for s in replay.atw.streams] == [("RND 4K R", 70.0),
                                                                      ("SEQ 128K W", 30.0)]
    assert replay.sections and all(isinstance(j, parameters.RwswSection) and j.section
                                   and j.iodepth for j in replay.sections)


@pytest.mark.parametrize("test,option,value,found,expected", [
    ("iops", "thread_count", "4", "str", "int"),
    ("iops", "queue_depth", True, "bool", "int"),
    ("iops", "point_seconds", "60", "str", "float"),
    ("iops", "tracking", {"label": "x"}, "dict", "list[Tracking]"),
    ("iops", "tracking", [{"label": 4}], 'list holding an object whose "label" is int',
     "list[Tracking]"),
    ("hir", "idle_seconds", [5, "10"], "list holding a str", "list[int]"),
    ("xsr", "groups", "RND 128K", "str", "list[XsrGroup]"),
    ("xsr", "groups", [{"group": 1, "seconds": "60"}],
     'list holding an object whose "seconds" is str', "list[XsrGroup]"),
    ("wsat", "stop_hours", None, None, None),          # null: not recorded, allowed
    ("wsat", "capacity_bytes", 1.5, "float", "int"),
])
def test_a_value_of_the_wrong_type_is_refused_naming_key_and_types(test, option, value,
                                                                  found, expected):
    stored = {**stored_starts()[test]["parameters"], option: value}
    if found is None:
        assert getattr(parameters.typed(test, stored, required=False), option) is None
        return
    with pytest.raises(parameters.ParametersError) as err:
        parameters.typed(test, stored)
    text = str(err.value)
    assert f'"{option}"' in text and f'"{test}"' in text, text
    assert f"is {found} " in text and f"must be {expected}" in text, text


def test_the_rwsw_record_checks_types_too(tmp_path):
    decl = rwsw_declarations(tmp_path)["rwsw-dirth"]
    bad = {**decl.parameters, "matrix": [[32, 32], [32, "1"]]}
    with pytest.raises(parameters.ParametersError,
                       match=r'"matrix" is list holding a list holding a str .*'
                             r"must be list\[list\[int\]\]"):
        parameters.typed("rwsw-dirth", bad)
    with pytest.raises(parameters.ParametersError, match='"atw" is list .*must be Atw'):
        parameters.typed("rwsw-dirth", {**decl.parameters, "atw": []})
    streams = [{"stream": "RND 4K R", "share_pct": "70"}]
    with pytest.raises(parameters.ParametersError,
                       match='"atw" is an object whose "streams" is list holding an object '
                             'whose "share_pct" is str .*must be Atw'):
        parameters.typed("rwsw-dirth", {**decl.parameters,
                                        "atw": {**decl.parameters["atw"], "streams": streams}})


def test_loading_a_run_with_a_value_of_the_wrong_type_says_where(tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(REFERENCE, folder)
    ledger = folder / "ledger.jsonl"
    lines = ledger.read_text(encoding="utf-8").splitlines()
    at = next(k for k, line in enumerate(lines) if '"test_start"' in line and '"xsr"' in line)
    rec = json.loads(lines[at])
    rec["parameters"]["thread_count"] = "1"
    lines[at] = json.dumps(rec)
    ledger.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(RunFolderError) as err:
        load_run(folder)
    text = str(err.value)
    assert f"ledger.jsonl line {at + 1}" in text and '"thread_count" is str' in text, text
    assert "must be int" in text and "XsrParameters" in text, text


# issue 48 §5: a reader takes the test_start parameters as their typed record
# (parameters.typed, TestResult.typed), nested objects included, never looks one up by its
# name in the stored dict. The modules that still do, each another change's of this step
# (export/cli and stored/cells: the figure catalogue's; session/options: the option
# table's): shrink it as they go.
READ_BY_NAME = {"pts/export/cli.py", "pts/stored/cells.py", "pts/session/options.py"}
PTS = Path(__file__).resolve().parents[2] / "pts"


def test_no_reader_looks_a_parameter_up_by_its_name():
    """No `<x>.parameters.get("...")` nor `<x>.parameters["..."]` in pts/ but in
    pts/results/parameters.py (and the modules of READ_BY_NAME, each of which still does)."""
    found: dict[str, list[str]] = {}
    for path in sorted(PTS.rglob("*.py")):
        rel = path.relative_to(PTS.parent).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "get":
                target = node.func.value
            elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                    and isinstance(node.slice.value, str):
                target = node.value
            else:
                continue
            if "parameters" in (getattr(target, "id", None), getattr(target, "attr", None)):
                found.setdefault(rel, []).append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    found.pop("pts/results/parameters.py", None)
    bad = [line for rel, lines in found.items() if rel not in READ_BY_NAME for line in lines]
    assert not bad, "read the typed record (TestResult.typed) instead:\n" + "\n".join(bad)
    assert READ_BY_NAME <= set(found), f"reads them typed now, drop it from READ_BY_NAME: " \
                                       f"{sorted(READ_BY_NAME - set(found))}"
