"""The report as a document: which pages it has, in which order — the run's summary, the
contents, the readings of the spec, the datasheet judgements, the OCP requirement verdicts
(NVMe drives), then each test's pages
(pts.report.pages) — and the layout passes that settle the page numbers the text itself
names (pts.report.renderers.pdf lays out one pass)."""

from __future__ import annotations

import copy
import dataclasses

from reportlab.platypus import Flowable

from pts.report.pages import ocp, qualification, readings, registry, summary, toc
from pts.report.renderers import chart_base, html, pdf
from pts.stored.model import RunView
from pts.stored.readings import TITLE as READINGS_TITLE
from pts.stored.verdict import on_page


def story_for(run: RunView) -> list[Flowable]:
    first = summary.pages(run)
    rest = readings.page(run) + qualification.build(run) + ocp.build(run)
    for test in run.tests:
        rest += registry.pages_for(run, test)
    return first + toc.page(run, first, rest) + rest


@dataclasses.dataclass(frozen=True)
class Laid:
    """A report laid out as PDF: its bytes (none when only laid out for HTML), the run view it
    shows (the verdict naming the page of the Readings section), the page of every heading and
    of every page marker, in story order, the page count, and for HTML the story as laid
    out, untouched by the layout. The HTML renderer shows the same pages by these."""

    pdf: bytes
    view: RunView
    headings: list[int]
    markers: list[int]
    total: int
    story: list[Flowable] | None = None


def build_pdf(run: RunView) -> bytes:
    """The report of `run` as PDF bytes."""
    return layout_pdf(run).pdf


def layout_pdf(run: RunView, for_html: bool = False) -> Laid:
    """The report of `run` laid out (see Laid). for_html: its charts are drawn as SVG
    (chart_base.svg_instead) and only sized on the pages; no PDF bytes, the story kept."""
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
        first = pdf.lay_out(view, story, total_pages=None, layout_only=for_html, draw=False)
        if view.verdict is run.verdict or first.headings[where] == page:
            break
        page = first.headings[where]
    kept = copy.deepcopy(fresh) if for_html else None
    doc = pdf.lay_out(view, fresh, total_pages=first.page, known_pages=first.headings,
                      layout_only=for_html)
    return Laid(b"" if for_html else doc.buf.getvalue(), view, doc.headings, doc.markers,
                doc.page, kept)


def layout_with_svg(run: RunView) -> tuple[Laid, list[Flowable]]:
    """The report laid out as the PDF is (the page numbers), from one story whose charts are
    drawn as SVG instead of PNG and only sized in the layout (the HTML renderer's input:
    pts.report.renderers.html). The page numbers are the PDF's: a chart takes the same room
    whether it is a PNG or an SVG."""
    token = chart_base.svg_instead(True)
    try:
        laid = layout_pdf(run, for_html=True)
    finally:
        chart_base.svg_instead_reset(token)
    return laid, laid.story


def build_html(run: RunView) -> str:
    """The report of `run` as one HTML page, showing the pages of its PDF."""
    return html.render(*layout_with_svg(run))
