"""The report as a document: which pages it has, in which order — the run's summary, the
contents, the readings of the spec, the datasheet judgements, then each test's pages
(pts.report.pages) — and the layout passes that settle the page numbers the text itself
names (pts.report.renderers.pdf lays out one pass)."""

from __future__ import annotations

import copy
import dataclasses

from reportlab.platypus import Flowable

from pts.report.pages import qualification, readings, registry, summary, toc
from pts.report.renderers import pdf
from pts.report.run.model import RunView
from pts.report.run.readings import TITLE as READINGS_TITLE
from pts.report.run.verdict import on_page


def story_for(run: RunView) -> list[Flowable]:
    first = summary.pages(run)
    rest = readings.page(run) + qualification.build(run)
    for test in run.tests:
        rest += registry.pages_for(run, test)
    return first + toc.page(run, first, rest) + rest


def build_pdf(run: RunView) -> bytes:
    """The report of `run` as PDF bytes."""
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
        _, total, headings = pdf.lay_out(view, story, total_pages=None)
        if view.verdict is run.verdict or headings[where] == page:
            break
        page = headings[where]
    data, _, _ = pdf.lay_out(view, fresh, total_pages=total, known_pages=headings)
    return data
