"""The datasheet file (pts.config.datasheet): requirements read, every malformed file a
clear error naming the line."""

import pytest

from pts.config.datasheet import DatasheetError, load, parse

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
    a, b = parse(GOOD, "ds.toml")
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
        parse(text, "ds.toml")
    assert message in str(exc.value)


def test_toml_syntax_error_says_where(tmp_path):
    path = tmp_path / "ds.toml"
    path.write_text('[[require]]\ntest = "iops\n')
    with pytest.raises(DatasheetError, match=r"line 2"):
        load(path)
    with pytest.raises(DatasheetError, match="cannot read datasheet"):
        load(tmp_path / "missing.toml")
