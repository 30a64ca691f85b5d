"""The table of contents page (after the run summary): every heading of the report (h1, h2
indented) with its page number.

The headings are known from the story before it is laid out; their pages are not. The PDF
is built twice anyway (document.build_pdf: pass 1 counts pages): pass 1 records the page of every
heading in order (ReportDoc.headings) and draws the contents with "?" for each page
number, pass 2 draws the numbers (ReportDoc.known_pages). The contents have the same rows in
both passes, so they take the same room and no heading moves between the passes.
"""

from __future__ import annotations

from collections.abc import Iterable

from reportlab.platypus import Flowable, KeepTogether, Paragraph

from pts.report.renderers.contents import Contents
from pts.report.renderers.layout import PageInfo, h1, new_page, para
from pts.stored.model import RunView

LEVELS = ("h1", "h2")


def headings(story: Iterable[Flowable]) -> list[tuple[str, str]]:
    """(style, text) of every heading of `story`, in order (inside KeepTogether too)."""
    out = []
    for f in story:
        if isinstance(f, KeepTogether):
            out += headings(f._content)
        elif isinstance(f, Paragraph) and f.style.name in LEVELS:
            out.append((f.style.name, f.getPlainText()))
    return out


def page(run: RunView, before: list[Flowable], after: list[Flowable]) -> list[Flowable]:
    """The contents page, to go between `before` (the summary) and `after` (the rest)."""
    first = headings(before)
    info = PageInfo("Contents", "Table of contents", "Table: contents of this report",
                    run.verdict.status, alarm=not run.verdict.compliant)
    return new_page(info) + [
        h1("Contents"),
        para("Every section of this report with the page it starts on (the PDF's bookmarks "
             "lead to the same places)."),
        Contents(first + [("h1", "Contents")] + headings(after), 0),
    ]
