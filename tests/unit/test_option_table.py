"""An option is one row (issue 48 §3): pytest's options, the checks, Settings, run.json's
options, the --resume replay, the deviations and the demo's mirrored options all come from
pts.config.option_table.ROWS, and Settings knows which options were given."""

import argparse
import dataclasses
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from pts.cli import demo
from pts.config import option_table
from pts.config.settings import Settings, SettingsError, make_settings
from pts.config.spec import load_spec
from pts.session import options
from pts.testdefs.rwsw import common, replay, sections

DOCS = Path(__file__).resolve().parents[2] / "docs" / "running.md"
# run.json's options as every run before the table stored them, in their order (readers and
# the JSON/OCPTV exports show them so): the table keeps both
RUN_JSON_OPTIONS = [
    "device", "destructive", "spec", "point_seconds", "max_rounds", "purge", "reports_dir",
    "iops_block_sizes", "iops_rw_mixes", "wsat_fills", "wsat_hours", "fob_sweep", "round_mode",
    "time_scale", "dirth_thread_counts", "dirth_queue_depths", "hir_repetitions",
    "purge_probe", "workload", "ioengine", "io_poll", "host_ceiling", "host_bound_share",
    "host_floor_margin", "form_factor"]


def parser() -> argparse.ArgumentParser:
    """The table's options as pts.session.options.add gives them to pytest."""
    p = argparse.ArgumentParser(allow_abbrev=False)
    for row in option_table.ROWS:
        p.add_argument(row.flag, **options._argparse(row))
    return p


def test_one_row_per_flag_and_name_each_with_its_docs_section():
    names = [r.name for r in option_table.ROWS]
    assert len(set(names)) == len(names) == len({r.flag for r in option_table.ROWS})
    anchors = {re.sub(r"[^\w\- ]", "", h.replace("`", "").lower()).replace(" ", "-")
               for h in re.findall(r"(?m)^#{1,6}\s+(.*)$", DOCS.read_text(encoding="utf-8"))}
    for row in option_table.ROWS:
        assert row.anchor in anchors, f"{row.flag}: docs/running.md has no #{row.anchor}"
        assert f"`{row.flag}" in DOCS.read_text(encoding="utf-8"), f"{row.flag} not documented"


def test_settings_fields_are_the_setting_rows():
    fields = list(Settings.__dataclass_fields__)
    made_elsewhere = {"spec", "report_info", "workload", "workload_path", "given", "power"}
    assert [f for f in fields if f not in made_elsewhere] == \
        [r.name for r in option_table.ROWS if r.setting]


def test_run_json_options_keep_their_keys_and_order():
    s = make_settings(load_spec())
    assert list(s.as_dict()) == RUN_JSON_OPTIONS
    assert s.as_dict()["point_seconds"] == 60 and s.as_dict()["wsat_fills"] == 4


def test_defaults_and_given_as_pytest_parses_them():
    ns = parser().parse_args([])
    for row in option_table.ROWS:
        assert getattr(ns, row.name) == row.absent, row.flag
    assert not hasattr(ns, options.GIVEN)
    ns = parser().parse_args(["--point-seconds", "60", "--no-purge-probe", "--purge=auto",
                              "--device", "a", "--device", "b"])
    assert getattr(ns, options.GIVEN) == {"point_seconds", "purge_probe", "purge", "device"}
    assert ns.point_seconds == 60 and ns.purge_probe is False and ns.device == ["a", "b"]
    config = SimpleNamespace(option=ns)
    s = make_settings(load_spec(), given=options.given(config), point_seconds=ns.point_seconds)
    assert s.explicit("point_seconds") and not s.explicit("max_rounds")
    assert s.point_seconds == 60 and s.deviations() == []     # the spec's value: no deviation


def test_every_deviation_comes_from_its_row_in_table_order():
    spec = load_spec()
    off = dict(point_seconds=1, max_rounds=8, purge="none", iops_block_sizes="4KiB,64KiB,1024KiB",
               wsat_fills=1.0, wsat_hours=2.0, fob_sweep=True, time_scale=0.5,
               dirth_thread_counts="32,1", dirth_queue_depths="32,1", hir_repetitions=3)
    said = make_settings(spec, **off).deviations()
    rows = [r for r in option_table.ROWS if r.deviation]
    assert len(said) == len(rows) == 11
    for sentence, row in zip(said, rows, strict=True):
        assert sentence == row.deviation(make_settings(spec, **{row.name: off[row.name]}))
    assert make_settings(spec).deviations() == []


@pytest.mark.parametrize("name,value,needle", [
    ("point_seconds", 0, "--point-seconds 0: must be a whole number of seconds >= 1"),
    ("round_mode", "fast", "--round-mode fast: choose one of pipelined"),
    ("io_poll", True, "--io-poll: polled completion is an io_uring option"),
    ("host_floor_margin", -1.0, "--host-floor-margin -1: must be >= 0"),
    ("dirth_queue_depths", "32,4", "--dirth-queue-depths 32,4: the reduced grid must keep 1"),
])
def test_each_check_names_its_flag(name, value, needle):
    with pytest.raises(SettingsError, match=re.escape(needle)):
        make_settings(load_spec(), **{name: value})


def test_resume_replays_the_run_options_and_what_was_given():
    ns = parser().parse_args(["--resume", "R", "--destructive"])
    stored = make_settings(load_spec(), point_seconds=60, iops_rw_mixes="100/0,65/35,0/100",
                           reports_dir="elsewhere").as_dict()
    state = SimpleNamespace(options=stored, run_json={"options": stored, "device": {
        "given": "/dev/x"}, "options_given": ["point_seconds", "iops_rw_mixes"]})
    options.replay(SimpleNamespace(option=ns), state)
    assert ns.point_seconds == 60 and ns.iops_rw_mixes == "100/0,65/35,0/100"
    assert ns.reports_dir == "reports" and ns.device == "/dev/x"      # this invocation's
    assert options.given(SimpleNamespace(option=ns)) == {
        "point_seconds", "iops_rw_mixes", "resume", "destructive"}
    # a run.json from before options_given: the options whose value is not the default's
    del state.run_json["options_given"]
    ns = parser().parse_args(["--resume", "R"])
    options.replay(SimpleNamespace(option=ns), state)
    assert options.given(SimpleNamespace(option=ns)) == {"iops_rw_mixes", "resume"}


def test_the_demo_mirrors_the_report_fields_of_the_table():
    p = argparse.ArgumentParser()
    demo.add_arguments(p)
    mirrored = {a.option_strings[0]: a for a in p._actions if a.option_strings}
    for flag in option_table.REPORT_FIELDS:
        assert mirrored[flag].metavar == option_table.BY_FLAG[flag].metavar
    args = p.parse_args(["--operator", "Ann", "--sponsor", "Lab"])
    assert demo.report_args(args) == ["--operator", "Ann", "--sponsor", "Lab"]
    for fixed in (demo.DEMO_ARGS, demo.RWSW_ARGS):      # the demo's own settings: rows too
        assert parser().parse_args(fixed).pts_given


def test_an_explicit_point_seconds_is_the_rwsw_round_length():
    """--point-seconds 60 given is 60 s rounds for the RWSW tests, though 60 is the PTS
    point's: only an option left out takes the spec file's round length (here 30 s)."""
    spec = load_spec()
    rwsw = dataclasses.replace(spec.rwsw, sections={
        k: v | ({"round_seconds": 30} if "round_seconds" in v else {})
        | ({"precondition_round_seconds": 30} if "precondition_round_seconds" in v else {})
        for k, v in spec.rwsw.sections.items()})
    spec = dataclasses.replace(spec, rwsw=rwsw)
    ns = parser().parse_args(["--point-seconds", "60"])
    given = make_settings(spec, given=options.given(SimpleNamespace(option=ns)),
                          point_seconds=ns.point_seconds)
    unset = make_settings(spec, given=options.given(SimpleNamespace(
        option=parser().parse_args([]))))
    assert given.point_seconds == unset.point_seconds == 60
    for section in (sections.WsatSection, sections.StreamsSection, sections.DirthSection):
        assert common.round_seconds(given, section) == 60, section.NAME
        assert common.round_seconds(unset, section) == 30, section.NAME
    assert replay.precondition_seconds(given) == 60 and replay.precondition_seconds(unset) == 30


def test_every_option_of_the_snia_pts_group_is_a_row(pytestconfig):
    """No plugin adds an option beside the table (the remote devices' --fio-port and
    --ssh-config and the datasheet's --datasheet were added by their own modules until
    stop 55): pytest's own group, as this session built it, holds the rows, in order."""
    group = pytestconfig._parser.getgroup("snia-pts")
    flags = [name for opt in group.options for name in opt.names() if name.startswith("--")]
    assert flags == [r.flag for r in option_table.ROWS]
    assert option_table.BY_FLAG["--fio-port"].default == 8765     # fio --server's (man fio)
