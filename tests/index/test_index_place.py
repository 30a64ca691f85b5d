"""The index's place (issue 48 §3): one precedence for every reader and writer (--index, else
$PTS_INDEX, else the default beside the reports), and each refusal names where the bad value
came from and the fix for that source (pts.index.target.place)."""

import pytest

from pts.index import db, live, target


def test_option_then_environment_then_default(tmp_path):
    env = {target.ENV: "postgresql://lab@db/pts"}
    assert target.place("x.sqlite", tmp_path, env) == target.Place("x.sqlite", target.OPTION)
    assert target.place(None, tmp_path, env) == target.Place(env[target.ENV], target.ENV)
    assert target.place("", tmp_path, {}) == target.Place(str(tmp_path), target.DEFAULT)
    assert target.place(None, None, {}) is None
    # every reader and writer takes that order
    assert target.resolve([str(tmp_path)], "x.sqlite", env) == "x.sqlite"
    assert target.resolve([str(tmp_path)], None, env) == env[target.ENV]
    assert target.resolve([str(tmp_path)], None, {}) == str(tmp_path / db.FILE_NAME)
    assert target.find(None, env) == env[target.ENV]
    assert live.target_for(tmp_path, env) == env[target.ENV]
    assert live.target_for(tmp_path, {}) is None           # the default only when it is there


@pytest.mark.parametrize("given,environ,came,fix", [
    ("{tmp}/none.sqlite", {}, "(from --index)", "give --index an SQLite file"),
    (None, {"PTS_INDEX": "{tmp}/none.sqlite"}, "(from the environment variable PTS_INDEX)",
     "set PTS_INDEX to an SQLite file, a report folder holding index.sqlite or a "
     "postgresql:// URL, or unset it"),
])
def test_a_missing_index_is_refused_naming_its_source_and_fix(tmp_path, given, environ, came,
                                                               fix):
    given = given and given.format(tmp=tmp_path)
    environ = {k: v.format(tmp=tmp_path) for k, v in environ.items()}
    with pytest.raises(db.IndexUnusable) as err:
        target.find(given, environ)
    assert f"no results index at {tmp_path / 'none.sqlite'}" in str(err.value)
    assert came in str(err.value) and fix in str(err.value)


def test_the_default_and_a_bad_url_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(db.IndexUnusable, match=r"no results index at reports/index.sqlite; make "
                       r"it with `python -m pts index REPORTS_DIR` \(the default, REPORTS_DIR/"
                       r"index.sqlite\): name another with --index or PTS_INDEX"):
        target.find(None, {})
    with pytest.raises(db.IndexUnusable, match=r"mysql://u:\*\*\*@h/d is not an index: .* \(from "
                       r"the environment variable PTS_INDEX\): set PTS_INDEX to"):
        target.resolve(["r"], None, {target.ENV: "mysql://u:pw@h/d"})
