"""The release gate's margins file (pts.config.margins): the built-in defaults with their
reasons, a lab's file over them, and every refusal naming the file, the line and the fix."""

from __future__ import annotations

import pytest

from pts.config import margins


def test_the_defaults_name_their_reason():
    m = margins.defaults()
    assert m.of("iops", "IOPS").fraction == 0.05 and "issue 50" in m.of("iops", "IOPS").why
    assert m.of("mbps", "MB/s").percent == 5
    assert m.of("lat_mean_us", "us").percent == 5 and "Little" in m.of("lat_mean_us", "us").why
    assert m.of("lat_percentile_us", "us").percent == 10
    assert m.of("qos_99.999_us", "us").percent == 10            # a tail, by its name
    assert m.of("peak_clat_max_us", "us").percent == 20         # a maximum
    assert m.of("capture_lat_mean_us", "us").percent == 5       # a mean
    assert m.of("wait_iops", "IOPS").percent == 5               # by its unit
    assert m.of("thread_count", "TC").percent == 5              # the default
    assert m.of("iops", "IOPS").where == margins.BUILT_IN


def test_a_file_overrides_by_metric_then_unit_then_default(tmp_path):
    path = tmp_path / "margins.toml"
    path.write_text('default = 7\n[metric]\niops = { percent = 3, why = "our SLA" }\n'
                    '[unit]\n"MB/s" = 4\n')
    m = margins.load(path)
    assert (m.of("iops", "IOPS").percent, m.of("iops", "IOPS").why) == (3, "our SLA")
    assert m.of("iops", "IOPS").where == f"{path} line 3"
    assert m.of("mbps", "MB/s").percent == 5          # the metric's built-in entry first
    assert m.of("end_tp_mbps", "MB/s").percent == 4   # then the file's unit entry
    assert m.of("thread_count", "TC").percent == 7
    assert m.of("lat_percentile_us", "us").percent == 10


@pytest.mark.parametrize("text, says", [
    ("[metric]\niops = 0.05\n", r"m line 2: \[metric\] iops = 0.05 %.*did you mean 5 for 5%"),
    ("[metric]\niops = 51\n", "between 0.1 and 50 percent"),
    ("[metric]\niops = 50\n[unit]\nIOPS = 0.1\n", None),       # both ends are allowed
    ("[unit]\nIOPS = \"five\"\n", "m line 2: .*a number of percent"),
    ("[metric]\niops = { pct = 5 }\n", r"m line 2: .*percent = N.*unknown: pct"),
    ("\n\nmargin = 5\n", "m line 3: unknown key"),
    ("metric = 5\n", "metric must be a table"),
    ("[metric\n", "not valid TOML"),
])
def test_refusals_name_the_line_and_the_fix(text, says):
    if says is None:
        assert margins.parse(text, "m").of("iops", "IOPS").percent == 50
        return
    with pytest.raises(margins.MarginsError, match=says):
        margins.parse(text, "m")


def test_an_unreadable_file_is_named(tmp_path):
    with pytest.raises(margins.MarginsError, match="cannot read margins file .*nope.toml"):
        margins.load(tmp_path / "nope.toml")
