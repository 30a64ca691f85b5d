"""pts.tools.atomic: the one atomic writer (run.json, reports, compare output, emulator state)."""

from __future__ import annotations

import json
import os

import pytest

from pts.tools import atomic


def test_a_write_replaces_the_file_whole(tmp_path):
    path = tmp_path / "run.json"
    path.write_text("old\n")
    atomic.write_json(path, {"b": 1, "a": [1, 2]})
    assert path.read_text() == '{\n  "b": 1,\n  "a": [\n    1,\n    2\n  ]\n}\n'
    assert json.loads(path.read_text()) == {"b": 1, "a": [1, 2]}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.json"]   # no temporary left


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "report.pdf"
    path.write_bytes(b"old report")

    def no_rename(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", no_rename)
    with pytest.raises(OSError, match="No space left"):
        atomic.write_bytes(path, b"new report")
    assert path.read_bytes() == b"old report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.pdf"]


def test_the_file_is_as_readable_as_open_would_make_it(tmp_path):
    umask = os.umask(0o022)
    try:
        atomic.write_text(tmp_path / "daemon.pid", "42\n")
    finally:
        os.umask(umask)
    assert (tmp_path / "daemon.pid").stat().st_mode & 0o777 == 0o644     # not mkstemp's 0600


def test_the_umask_is_read_not_changed(tmp_path, monkeypatch):
    """The umask is read from /proc/self/status: setting one to read it (and putting it back)
    leaves the process with umask 0 for a moment, for every thread and every tool started
    meanwhile (a report written while the dashboard or the live index runs)."""
    old = os.umask(0o027)
    try:
        def no_change(mask):
            raise AssertionError(f"os.umask({mask:o}) called: the process's umask changed")
        monkeypatch.setattr(os, "umask", no_change)
        atomic.write_text(tmp_path / "run.json", "{}\n")
        assert atomic.umask() == 0o027
    finally:
        monkeypatch.undo()
        os.umask(old)
    assert (tmp_path / "run.json").stat().st_mode & 0o777 == 0o640
