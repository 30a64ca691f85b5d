"""The end of a several-device session: its session folder under --reports-dir
(sessions/<UTC stamp>/) with session.json (every device: label, as given, refusal, exit
status, run folder) and the comparison of the run folders written by the code of
`python -m pts compare` (compare.pdf + compare.csv). Runs of one session differ only by
device, which compare does not count as a difference (pts.compare.data.NOT_SETTINGS)."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from pts.compare import cli as compare_cli
from pts.results.ledger import stamped_folder


def session_folder(reports_dir: Path) -> Path:
    parent = Path(reports_dir) / "sessions"
    folder = stamped_folder(parent)
    if folder is None:
        raise OSError(f"cannot create a session folder under {parent}")
    return folder


def write_comparison(reports_dir: Path, checked: Sequence, folders: Mapping[str, Path | None],
                     returncodes: Mapping[str, int | None] | None = None) -> list[str]:
    """Write the session folder and the comparison; the lines to print, the comparison's
    path (or why there is none) last."""
    runs = [folders[c.label] for c in checked if folders.get(c.label) is not None]
    try:
        folder = session_folder(reports_dir)
        (folder / "session.json").write_text(json.dumps({
            "devices": [{"label": c.label, "given": c.given,
                         "path": c.device.path if c.device is not None else None,
                         "refused": c.refused,
                         "exit_status": (returncodes or {}).get(c.label),
                         "run_folder": None if folders.get(c.label) is None
                         else str(folders[c.label])} for c in checked]}, indent=2) + "\n")
    except OSError as exc:
        return [f"PTS comparison not written: cannot write the session folder ({exc})"]
    if len(runs) < 2:
        return [f"PTS comparison not written: {len(runs)} run folder(s), it needs two or "
                f"more (session: {folder})"]
    out, err = io.StringIO(), io.StringIO()
    # compare's own parser: every option it has gets its default (a Namespace made here
    # lacked --where once compare gained it, and every session's comparison failed)
    parser = argparse.ArgumentParser(prog="python -m pts compare")
    compare_cli.add_arguments(parser)
    args = parser.parse_args([*map(str, runs), "-o", str(folder)])
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = compare_cli.run(args)
        except Exception as exc:        # the runs are safe on disk; say how to retry
            rc, err = -1, io.StringIO(f"{type(exc).__name__}: {exc}")
    if rc != compare_cli.EXIT_OK:
        return [f"PTS comparison not written: {err.getvalue().strip()}",
                "retry with: python -m pts compare " + " ".join(map(str, runs))
                + f" -o {folder}"]
    return [f"PTS session: {folder / 'session.json'}",
            f"PTS comparison: {folder / 'compare.csv'}",
            f"PTS comparison: {folder / 'compare.pdf'}"]
