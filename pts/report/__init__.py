"""The PTS conformance report: a PDF rendered from a run folder's stored data only.

    from pts.report import render
    render("reports/<model>_<serial>/<run-id>")   # -> Path of report.pdf

Every room reads the stored run below this layer (pts.stored: run.json + ledger -> model,
verdict, warnings, readings, QoS levels, number formats; renderer-free).
Rooms, imports going one way (tests/unit/test_architecture.py):
  renderers/  the PDF machinery (layout: flowables and geometry; pdf: page template and one
              layout pass) and the charts (chart_base: what every chart shares; matplotlib
              PNGs, SVG for HTML); know no page content
  pages/      what each page says, per test family; registry.py: which pages a test gets
At the top: document (the pages in order, and the layout passes), cli (`python -m pts
report`), console (pytest's terminal summary). compare, qualify and export are packages of
their own above this one (pts.compare, pts.qualify, pts.export).
"""

from __future__ import annotations


def render(run_dir, output=None):
    """See pts.report.cli.render; imported lazily so `import pts.report` stays cheap."""
    from pts.report.cli import render as _render
    return _render(run_dir, output)


__all__ = ["render"]
