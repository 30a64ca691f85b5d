"""A capture's own pages as a PDF, without a drive or a run (`python -m pts workload CAPTURE
--pdf`): the workload pages a run's report shows (pts.report.pages.workload), drawn from the
characterisation, under a band naming the capture instead of a device under test."""

from __future__ import annotations

import io

from reportlab.platypus import Frame, PageTemplate
from reportlab.platypus.doctemplate import BaseDocTemplate

from pts import __version__
from pts.report.pages import workload
from pts.report.renderers import layout
from pts.report.renderers.layout import CONTENT_WIDTH, MARGIN, PAGE_SIZE, PageInfo
from pts.stored.workload_view import WorkloadView

BAND = 24


def build_pdf(view: WorkloadView) -> bytes:
    status = workload.lost_warning(view) or ("no events lost" if view.lost_events == 0
                                             else "lost events: unknown")
    story = workload.pages(view, lambda sub, foot: PageInfo(
        "Workload", sub, foot, status, alarm=bool(view.lost_events)), first=True)
    buf = io.BytesIO()
    doc = BaseDocTemplate(buf, pagesize=PAGE_SIZE, leftMargin=MARGIN, rightMargin=MARGIN,
                          topMargin=MARGIN + BAND + 6, bottomMargin=MARGIN + 20,
                          title=f"RWSW workload: {view.atw_name}", author="snia-pts",
                          creator=f"snia-pts {__version__}")
    frame = Frame(MARGIN, MARGIN + 20, CONTENT_WIDTH, PAGE_SIZE[1] - 2 * MARGIN - BAND - 26,
                  leftPadding=0, rightPadding=0, topPadding=0, bottomPadding=0)
    doc.addPageTemplates([PageTemplate("workload", [frame],
                                       onPage=lambda c, d: _decorate(c, view, status))])
    doc.build(story)
    return buf.getvalue()


def _decorate(canv, view: WorkloadView, status: str) -> None:
    width, height = PAGE_SIZE
    canv.saveState()
    canv.setFillColor(layout.NAVY)
    canv.rect(MARGIN, height - MARGIN - BAND, CONTENT_WIDTH, BAND, fill=1, stroke=0)
    canv.setFillColorRGB(1, 1, 1)
    canv.setFont("Helvetica-Bold", 10.5)
    canv.drawString(MARGIN + 6, height - MARGIN - 16, f"SNIA RWSW — workload of {view.source}"
                    [:90])
    canv.setFont("Helvetica", 8.5)
    canv.drawRightString(width - MARGIN - 6, height - MARGIN - 16,
                         f"Page {canv.getPageNumber()}")
    canv.setFillColor(layout.RED if view.lost_events else layout.NAVY)
    canv.setFont("Helvetica", 7)
    canv.drawString(MARGIN, MARGIN + 6, f"snia-pts {__version__}   {status}"[:160])
    canv.restoreState()
