"""The report as a document: which pages it has, in which order — the run's summary, the
contents, the readings of the spec, the datasheet judgements, then each test's pages
(pts.report.pages) — and the layout passes that settle the page numbers the text itself
names (pts.report.renderers.pdf lays out one pass)."""

from __future__ import annotations

import copy
import dataclasses

from reportlab.platypus import Flowable

from pts.report.pages import qualification, readings, registry, summary, toc
from pts.report.renderers import charts, html, pdf
from pts.report.run.model import RunView
from pts.report.run.readings import TITLE as READINGS_TITLE
from pts.report.run.verdict import on_page


def story_for(run: RunView) -> list[Flowable]:
    first = summary.pages(run)
    rest = readings.page(run) + qualification.build(run)
    for test in run.tests:
        rest += registry.pages_for(run, test)
    return first + toc.page(run, first, rest) + rest


@dataclasses.dataclass(frozen=True)
class Laid:
    """A report laid out as PDF: its bytes, the run view it shows (the verdict naming the
    page of the Readings section), the page of every heading and of every page marker, in
    story order, and the page count. The HTML renderer shows the same pages by these."""

    pdf: bytes
    view: RunView
    headings: list[int]
    markers: list[int]
    total: int


def build_pdf(run: RunView) -> bytes:
    """The report of `run` as PDF bytes."""
    return layout_pdf(run).pdf


def layout_pdf(run: RunView) -> Laid:
    """The report of `run` laid out (see Laid)."""
    # The verdict of a compliant run resting on readings names the page of the Readings
    # section, known only once laid out: lay out with "page ?", then with the page found,
    # until the section stays on the page the verdict names (one extra pass in practice).
    page: int | str = "?"
    for _ in range(4):
        view = dataclasses.replace(run, verdict=on_page(run.verdict, page))
        story = story_for(view)
        where = toc.headings(story).index(("h1", READINGS_TITLE))
        # Pass 1 only counts pages; pass 2 lays out an untouched copy of the same story: a
        # table split across pages in pass 1 is left altered and cannot be laid out again.
        fresh = copy.deepcopy(story)
        first = pdf.lay_out(view, story, total_pages=None)
        if view.verdict is run.verdict or first.headings[where] == page:
            break
        page = first.headings[where]
    doc = pdf.lay_out(view, fresh, total_pages=first.page, known_pages=first.headings)
    return Laid(doc.buf.getvalue(), view, doc.headings, doc.markers, doc.page)


def layout_with_svg(run: RunView) -> tuple[Laid, list[Flowable]]:
    """The PDF laid out, and the same story again with every chart drawn as SVG too (the
    HTML renderer's input: pts.report.renderers.html)."""
    token = charts.svg_too(True)
    try:
        laid = layout_pdf(run)
        return laid, story_for(laid.view)
    finally:
        charts.svg_too_reset(token)


def build_html(run: RunView) -> str:
    """The report of `run` as one HTML page, showing the pages of its PDF."""
    return html.render(*layout_with_svg(run))
