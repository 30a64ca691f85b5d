"""--power as a row of the option table and its start-up check (issue 51 §5): the row parses
it (a bad value a SettingsError naming the part and the fix), and the session's check asks
each source once, refusing one that does not answer, naming it. A lab meter simulated by
tests/data/meter_sim.py is the source that answers (and the one that dies)."""

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from pts.config import option_table
from pts.config.settings import SettingsError, make_settings
from pts.config.spec import DEFAULT_SPEC, load_spec
from pts.session import power_check

METER = Path(__file__).resolve().parents[1] / "data" / "meter_sim.py"
ROW = option_table.BY_FLAG["--power"]


def power(text):
    return ROW.check(ROW.flag, text, load_spec(DEFAULT_SPEC), {})


def settings(text):
    import dataclasses
    return dataclasses.replace(make_settings(load_spec(DEFAULT_SPEC)), power=power(text))


def device(emulated=False):
    return SimpleNamespace(path="/dev/null", given="/dev/null", emulated=emulated)


def test_the_row_parses_power_sources_and_none():
    assert power(None) == () and power("none") == ()
    found = power(f"meter:{sys.executable} {METER},measures=the drive,interval=0.2,rapl")
    assert [s.kind for s in found] == ["meter", "rapl"]
    assert found[0].params == {"measures": "the drive", "interval": "0.2"}
    assert not ROW.kept and not ROW.setting       # run.json's options stay as they were


@pytest.mark.parametrize("text, needle", [
    ("bogus", "unknown"), ("interval=1", "before any source"), ("rapl,interval=0", "interval"),
    ("none,rapl", "none")])
def test_a_bad_value_is_a_settings_error_naming_it(text, needle):
    with pytest.raises(SettingsError, match="--power") as err:
        power(text)
    assert needle in str(err.value)


def test_a_meter_that_answers_passes_and_one_that_dies_is_refused_naming_it():
    power_check.check(settings(f"meter:{sys.executable} {METER} --period 0.05,interval=0.1"),
                      device())
    with pytest.raises(power_check.PowerRefused) as err:
        power_check.check(settings("meter:/bin/false,interval=0.1"), device())
    assert "meter:/bin/false" in str(err.value) and "Fix the source" in str(err.value)


def test_emulated_on_a_real_drive_and_the_drive_itself_are_refused_with_the_fix():
    with pytest.raises(power_check.PowerRefused, match="not an emulated SSD"):
        power_check.check(settings("emulated"), device())
    with pytest.raises(power_check.PowerRefused, match="is the emulated SSD"):
        power_check.check(settings("drive"), device(emulated=True))
