"""--resume without --power takes the stopped run's sources back from its power_source records
(pts.procedure.resume.power_sources; the device run is tests/e2e/test_power_resume.py): in
order, each once, the password-file= the stored name left out said; a name the parser no
longer takes said and left out; --power given with --resume wins; a run not resumed, none."""

from __future__ import annotations

from types import SimpleNamespace

from pts.config.power_option import parse
from pts.procedure import power_windows, resume
from pts.results import records


def source(name: str, error: str | None = None) -> records.PowerSourceInfo:
    return records.PowerSourceInfo(test=None, name=name, measures="server", interval_s=1.0,
                                   kind="power", detail="", error=error)


def stopped(*names: str, power: str | None = None):
    recs = [source(n) for n in names] + [records.Deviation(test="iops", text="x")]
    return SimpleNamespace(resume=SimpleNamespace(records=recs),
                           settings=SimpleNamespace(power=tuple(parse(power)) if power else ()))


def test_the_stopped_runs_sources_in_order_each_once():
    run = stopped("ipmi:10.0.0.5,user=admin", "rapl", "ipmi:10.0.0.5,user=admin")
    specs, said = resume.power_sources(run)
    assert [s.text for s in specs] == ["ipmi:10.0.0.5,user=admin", "rapl"]
    assert said == ("--resume: the stopped run's sources again: ipmi:10.0.0.5,user=admin, "
                    "rapl (a password-file= is not stored: give --power again with it where "
                    "a source needs one)",)
    assert [s.text for s in power_windows.sources(run)] == [s.text for s in specs]


def test_a_name_the_parser_refuses_is_said_and_left_out():
    specs, said = resume.power_sources(stopped("rapl", "nonsense:x"))
    assert [s.text for s in specs] == ["rapl"]
    assert said[0].startswith("--resume: the stopped run's source 'nonsense:x' is not taken "
                              "back (") and said[0].endswith("); give --power again for it")


def test_power_given_wins_and_a_fresh_run_has_none():
    run = stopped("rapl", power="emulated")
    assert [s.text for s in power_windows.sources(run)] == ["emulated"]
    assert resume.power_sources(SimpleNamespace(resume=None)) == ((), ())
    fresh = SimpleNamespace(resume=None, settings=SimpleNamespace(power=()))
    assert power_windows.sources(fresh) == ()
