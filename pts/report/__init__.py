"""The PTS conformance report: a PDF rendered from a run folder's stored data only.

    from pts.report import render
    render("reports/<model>_<serial>/<run-id>")   # -> Path of report.pdf

Modules: model (dataclasses), ledger + data (reading a run folder), verdict, charts
(matplotlib PNGs), layout + summary + steady_pages + iops_pages + counters_pages + pages
(page content), pdf (page template and build), cli (`python -m pts report`).
"""

from __future__ import annotations


def render(run_dir, output=None):
    """See pts.report.cli.render; imported lazily so `import pts.report` stays cheap."""
    from pts.report.cli import render as _render
    return _render(run_dir, output)


__all__ = ["render"]
