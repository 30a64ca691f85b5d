"""The datasheet file (pts.config.datasheet): requirements read, every malformed file a
clear error naming the line."""

import pytest

from pts.config.datasheet import DatasheetError, load, parse
from pts.stored.figures import datasheet_vocabulary

VOCABULARY = datasheet_vocabulary()

GOOD = """name = "Drive X"

[[require]]
test = "iops"
cell = "RND 4KiB 0/100"
metric = "iops"
at_least = 180000

[[require]]
test = "wsat"
metric = "ss_iops"
at_most = 5e4
"""


def test_requirements_read_with_their_lines():
    a, b = parse(GOOD, VOCABULARY, "ds.toml")
    assert (a.test, a.cell, a.metric, a.bound, a.value) == ("iops", "RND 4KiB 0/100", "iops",
                                                            "at_least", 180000.0)
    assert a.where == "ds.toml line 3" and b.where == "ds.toml line 9"
    assert a.id == "iops RND 4KiB 0/100 iops >= 180000" and b.id == "wsat ss_iops <= 50000"
    assert a.met_by(180000) and not a.met_by(179999.9)
    assert b.met_by(50000) and not b.met_by(50001)


@pytest.mark.parametrize("text, message", [
    ('[[require]]\ntest = "iops"\ncell = "c"\nmetric = "iopz"\nat_least = 1\n',
     "ds.toml line 4: metric 'iopz' unknown"),
    ('[[require]]\ntest = "iops"\ncell = "c"\nmetric = "iops"\n',
     "ds.toml line 1: give exactly one of at_least"),
    ('[[require]]\ntest = "iops"\ncell = "c"\nmetric = "iops"\nat_least = 1\nat_most = 2\n',
     "ds.toml line 1: give exactly one of"),
    ('[[require]]\ntest = "iops"\nmetric = "iops"\nat_least = 1\n',
     'ds.toml line 1: "cell" missing'),
    ('[[require]]\ntest = "iops"\ncell = "c"\nmetric = "iops"\nat_least = "many"\n',
     "ds.toml line 5: at_least must be a number"),
    ('[[require]]\ntest = "iops"\ncell = "c"\nmetric = "iops"\nat_least = 1\nunit = "x"\n',
     "ds.toml line 6: unknown key 'unit'"),
    ('[[require]]\ntest = "iops"\ncell = "c"\nmetric = "iops"\nat_least = 1\n\n'
     '[[require]]\ncell = "c"\nmetric = "iops"\nat_least = 1\n',
     'ds.toml line 7: "test" missing'),
    ('[[require]\ntest = "iops"\n', "ds.toml: not valid TOML"),
    ('title = "x"\n', "ds.toml: unknown top-level key(s) title"),
    ('name = "x"\n', "ds.toml: no [[require]] table"),
])
def test_malformed_file_names_the_line(text, message):
    with pytest.raises(DatasheetError) as exc:
        parse(text, VOCABULARY, "ds.toml")
    assert message in str(exc.value)


def test_toml_syntax_error_says_where(tmp_path):
    path = tmp_path / "ds.toml"
    path.write_text('[[require]]\ntest = "iops\n')
    with pytest.raises(DatasheetError, match=r"line 2"):
        load(path, VOCABULARY)
    with pytest.raises(DatasheetError, match="cannot read datasheet"):
        load(tmp_path / "missing.toml", VOCABULARY)


def test_each_requirement_item_is_collected_right_after_its_test(tmp_path):
    from tests.support.ptsrun import run_suite

    ds = tmp_path / "ds.toml"
    ds.write_text('[[require]]\ntest = "wsat"\nmetric = "ss_iops"\nat_least = 1\n\n'
                  '[[require]]\ntest = "iops"\ncell = "RND 4KiB 0/100"\nmetric = "iops"\n'
                  'at_least = 2\n\n[[require]]\ntest = "iops"\ncell = "RND 4KiB 0/100"\n'
                  'metric = "lat_mean_us"\nat_most = 3\n\n[[require]]\n'
                  'test = "throughput-128k"\ncell = "SEQ 128KiB 0/100"\nmetric = "mbps"\n'
                  'at_least = 4\n')
    proc = run_suite("--datasheet", str(ds), "--collect-only", "-q")
    items = [line.split("::", 1)[1] for line in proc.stdout.splitlines() if "::" in line]
    assert items == [      # PTS tests in the registry's order, each followed by its requirements
        "test_iops",
        "test_requirement[iops RND 4KiB 0/100 iops >= 2]",
        "test_requirement[iops RND 4KiB 0/100 lat_mean_us <= 3]",
        "test_throughput[throughput-1024k]",
        "test_throughput[throughput-128k]",
        "test_requirement[throughput-128k SEQ 128KiB 0/100 mbps >= 4]",
        "test_latency",
        "test_wsat",
        "test_requirement[wsat ss_iops >= 1]",
        "test_dirth",
        "test_cbw",
        "test_hir",
        "test_xsr",
        "test_rwsw_wsat",          # the RWSW tests (they skip without --workload)
        "test_rwsw_streams",
        "test_rwsw_replay",
        "test_rwsw_dirth",
    ], proc.stdout + proc.stderr


def test_malformed_datasheet_stops_pytest_naming_the_line(tmp_path):
    from tests.support.ptsrun import run_suite

    ds = tmp_path / "ds.toml"
    ds.write_text('[[require]]\ntest = "iosp"\ncell = "x"\nmetric = "iops"\nat_least = 1\n')
    proc = run_suite("--datasheet", str(ds), "--collect-only", "-q")
    assert proc.returncode == 4
    assert f"--datasheet: {ds} line 1: unknown test 'iosp'" in proc.stderr


def test_without_datasheet_no_requirement_item():
    from tests.support.ptsrun import run_suite

    proc = run_suite("--collect-only", "-q")
    assert "test_requirement" not in proc.stdout and proc.returncode == 0, proc.stdout
