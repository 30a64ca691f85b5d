"""The §5 report fields a person gives: --operator/--auditor/--sponsor over --report-info
FILE.toml, a bad file stopping the session at start-up (naming file, key and fix), and the
options passed on by `python -m pts demo` and to the children of a several-device session."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from pts.cli import demo
from pts.config import report_info as ri
from pts.session import devices
from tests.support.helpers import REPO


def test_every_key_of_the_file_is_a_field_and_the_command_line_wins(tmp_path):
    f = tmp_path / "info.toml"
    f.write_text('operator = "File Op"\nsponsor = "Lab"\nform_factor = "M.2 2280"\n'
                 'media_type = "3D TLC NAND"\nsystem_model = " XS-2400 "\n')
    info = ri.make_report_info(operator="Cli Op", auditor="Aud", file=str(f))
    assert info == ri.ReportInfo(operator="Cli Op", auditor="Aud", sponsor="Lab",
                                 form_factor="M.2 2280", media_type="3D TLC NAND",
                                 system_model="XS-2400", file=str(f.resolve()))
    assert set(ri.KEYS) == set(info.as_dict()) - {"file"}


@pytest.mark.parametrize(("text", "expected"), [
    ('operater = "x"\n', "unknown key 'operater'; the keys are operator, auditor"),
    ('operator = 3\n', "key 'operator' must be non-empty text in quotes"),
    ('operator = ""\n', "key 'operator' must be non-empty text in quotes"),
    ('operator = A. Tester\n', "not valid TOML"),
    ('[operator]\nname = "x"\n', "key 'operator' must be non-empty text"),
])
def test_a_bad_file_names_file_key_and_fix(tmp_path, text, expected):
    f = tmp_path / "info.toml"
    f.write_text(text)
    with pytest.raises(ri.ReportInfoError) as exc:
        ri.make_report_info(file=str(f))
    assert str(exc.value).startswith(f"--report-info {f}: ") and expected in str(exc.value)


def test_a_missing_file_and_an_empty_option_are_errors(tmp_path):
    with pytest.raises(ri.ReportInfoError, match="nosuch.toml: cannot read it"):
        ri.make_report_info(file=str(tmp_path / "nosuch.toml"))
    with pytest.raises(ri.ReportInfoError, match="--operator is empty: give a name"):
        ri.make_report_info(operator="  ")


def test_bad_report_info_stops_pytest_before_the_device_is_looked_at(tmp_path):
    bad = tmp_path / "info.toml"
    bad.write_text('operator = "A"\nmotherbord = "X11"\n')
    reports = tmp_path / "reports"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "pts/", "-p", "no:cacheprovider", "--device",
         str(tmp_path / "no-such-device"), "--destructive", "--reports-dir", str(reports),
         "--report-info", str(bad)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 4, proc.stdout + proc.stderr       # pytest's usage error
    assert f"--report-info {bad}: unknown key 'motherbord'" in proc.stderr
    assert "no such device" not in proc.stderr and not reports.exists()


def test_demo_passes_the_report_fields_to_its_run(tmp_path):
    p = argparse.ArgumentParser()
    demo.add_arguments(p)
    args = p.parse_args(["--operator", "A. Tester", "--report-info", "rel.toml"])
    assert demo.report_args(args) == ["--operator", "A. Tester", "--report-info",
                                      str((tmp_path.cwd() / "rel.toml").resolve())]
    assert demo.report_args(p.parse_args([])) == []


def test_several_device_children_get_the_report_fields(tmp_path):
    parent = ["pts/", "--device", "/dev/loop1", "--device", "/dev/loop2", "--operator",
              "A. Tester", "--auditor=B", "--report-info", "info.toml"]
    child = devices.child_args(parent, "/dev/loop2", tmp_path / "log")
    assert child[:7] == ["pts/", "--operator", "A. Tester", "--auditor=B", "--report-info",
                         "info.toml", "--device"]
