"""What the RWSW tests share: the text of a hand-written Applied Test Workload file
(pts.workload.atw), the Settings of a run applying one (no device), and a spec whose
[rwsw_*] sections are changed."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from pts.config.settings import Settings, make_settings
from pts.config.spec import load_spec
from pts.session.options import with_workload

# (access, direction, size, share_pct): RND 4K R 60 %, RND 4K W 30 %, SEQ 128K W 10 %
THREE_STREAMS = (("RND", "R", "4KiB", 60.0), ("RND", "W", "4KiB", 30.0),
                 ("SEQ", "W", "128KiB", 10.0))


def atw_text(name: str, streams, thread_count: int = 2, queue_depth: int = 8) -> str:
    """An ATW file's [workload] table and one [[stream]] table per (access, direction,
    size, share_pct) of `streams` (a size: "4KiB" or bytes); [[step]] tables go after it."""
    return f"""[workload]
format = "snia-pts-atw"
version = 1
name = "{name}"
thread_count = {thread_count}
queue_depth = {queue_depth}
""" + "".join(f"""
[[stream]]
access = "{a}"
direction = "{d}"
size = {json.dumps(s)}
share_pct = {p}
""" for a, d, s, p in streams)


def settings_with(tmp_path: Path, text: str | None, spec: str = "pts-2.0.2-enterprise",
                  rwsw: dict[str, dict] | None = None, **kw) -> Settings:
    """A run's Settings (device /dev/x, 1 s points, 5 rounds, trim purge, reports in
    tmp_path, `kw` more) applying the ATW `text` written to tmp_path/w.toml (None: the file
    there stands), its spec's [rwsw_*] sections changed by `rwsw` (with_rwsw)."""
    path = tmp_path / "w.toml"
    if text is not None:
        path.write_text(text)
    s = make_settings(load_spec(spec), device="/dev/x", destructive=True, point_seconds=1,
                      max_rounds=5, purge="trim", reports_dir=tmp_path, **kw)
    s = with_workload(s, str(path))
    return with_rwsw(s, rwsw) if rwsw else s


def with_rwsw(s: Settings, changes: dict[str, dict]) -> Settings:
    """`s` with its spec's [rwsw_*] sections' keys set as `changes` says
    ({"rwsw_dirth": {"demand_to_steady_state": False}})."""
    rwsw = s.spec.rwsw
    sections = {k: rwsw.sections[k] | changes.get(k, {}) for k in rwsw.sections}
    return dataclasses.replace(s, spec=dataclasses.replace(
        s.spec, rwsw=dataclasses.replace(rwsw, sections=sections)))
