"""The report PDF: page template (header band, footer), outline, and one layout pass of a
story, which tells the page of every heading and N for "Page n of N" (pts.report.document
runs the passes).

The renderer knows no page content: it lays out the flowables it is given, and draws the
band and footer of each page from the run and the page's PageMarker. reportlab's invariant
mode fixes the creation date and document id, so the same run folder always gives the same
bytes.
"""

from __future__ import annotations

import io

from reportlab import rl_config
from reportlab.lib.units import mm
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.platypus import (
    BaseDocTemplate,
    Flowable,
    Frame,
    PageBreak,
    PageTemplate,
    Paragraph,
)

from pts import __version__
from pts.report.renderers import layout
from pts.report.renderers.layout import (
    CONTENT_WIDTH,
    FOOTER_HEIGHT,
    HEADER_HEIGHT,
    MARGIN,
    PAGE_SIZE,
)
from pts.results.parameters import RwswParameters
from pts.stored import fmt
from pts.stored.model import RunView

rl_config.invariant = 1
# Image streams stored binary (Flate) rather than ASCII85 text: reportlab's ASCII85 encoder
# is pure Python without the optional rl_accel extension, and took ~2 s of each full-size
# report's layout passes (every chart is encoded once per pass); the files are ~20 % smaller.
rl_config.useA85 = 0

OUTLINE = {"h1": 0, "h2": 1}   # paragraph style -> outline (bookmark) level
FONT, BOLD = "Helvetica", "Helvetica-Bold"
ALARM_TEXT = (1.0, 0.75, 0.75)   # on the navy band
OK_TEXT = (0.7, 1.0, 0.75)


def lay_out(run: RunView, story: list[Flowable], total_pages: int | None,
            known_pages: list[int] | None = None, layout_only: bool = False,
            draw: bool = True) -> ReportDoc:
    """One layout pass; the document tells the bytes (.buf), the page count (.page) and the
    page of every heading (.headings) and page marker (.markers), in story order.
    layout_only: for the pages only (the HTML report); its charts may be SVG (layout.SvgChart),
    which take their room and draw nothing.
    draw=False: a pass that only counts pages (pass 1 of pts.report.document.layout_pdf):
    every flowable is wrapped and split as when drawn, but draws nothing (its bytes are thrown
    away; a third of a pass's time went to drawing tables and encoding chart images). Its
    story cannot be laid out again."""
    doc = ReportDoc(io.BytesIO(), run, total_pages)
    doc.body.draws = draw
    doc.layout_only = layout_only
    doc.known_pages = known_pages or []     # pass 2: the contents page's page numbers
    doc.build(story)
    return doc


class _Body(Frame):
    """The page's body frame. draws False (lay_out(draw=False)): each flowable it places keeps
    its place and size and draws nothing (reportlab's Frame draws a flowable where it adds
    it; its wrap and split, which decide the pages, are left as they are)."""

    draws = True

    def add(self, flowable, canv, trySplit=0):
        if not self.draws:
            flowable.drawOn = _draw_nothing
        return super().add(flowable, canv, trySplit)


def _draw_nothing(canvas, x, y, _sW=0) -> None:
    return None


class ReportDoc(BaseDocTemplate):
    def __init__(self, buf, run: RunView, total_pages: int | None):
        dev = run.device
        super().__init__(
            buf, pagesize=PAGE_SIZE, leftMargin=MARGIN, rightMargin=MARGIN,
            topMargin=MARGIN + HEADER_HEIGHT, bottomMargin=MARGIN + FOOTER_HEIGHT,
            title=f"SNIA SSS PTS report: {dev.model} {dev.serial}",
            subject=f"{run.spec_title}, run {run.run_id}", author="snia-pts",
            creator=f"snia-pts {__version__}")
        self.buf = buf
        self.run = run
        self.total_pages = total_pages
        self.markers: list[int] = []           # the page of every page marker, in order
        self.info: layout.PageInfo | None = None
        self._bookmarks = 0
        self.headings: list[int] = []          # the page of every heading, in order
        self.known_pages: list[int] = []
        self.layout_only = False               # see lay_out
        self._header_again = None              # the SNIA header block of the current test
        self._page_fresh = False
        self.body = _Body(MARGIN, MARGIN + FOOTER_HEIGHT, CONTENT_WIDTH,
                          PAGE_SIZE[1] - 2 * MARGIN - HEADER_HEIGHT - FOOTER_HEIGHT,
                          leftPadding=0, rightPadding=0, topPadding=0, bottomPadding=0,
                          id="body")
        self.addPageTemplates([PageTemplate("report", [self.body], onPageEnd=self._decorate)])

    def handle_pageBegin(self):
        super().handle_pageBegin()
        self._page_fresh = True

    def handle_flowable(self, flowables):
        # A page that begins with anything but a new page's marker is a continuation (a
        # table or text that did not fit): it gets the test's SNIA header block too.
        if getattr(self, "_page_fresh", False):
            self._page_fresh = False
            if (self._header_again and flowables
                    and not isinstance(flowables[0], layout.PageMarker | PageBreak)):
                flowables.insert(0, self._header_again())
        super().handle_flowable(flowables)

    def afterFlowable(self, flowable):
        # Page markers set the header of the page they land on; headings feed the outline.
        if isinstance(flowable, layout.PageMarker):
            self.info = flowable.info
            self.markers.append(self.page)
            self._header_again = None
        elif callable(again := getattr(flowable, "pts_header_again", None)):
            self._header_again = again
        elif isinstance(flowable, Paragraph) and flowable.style.name in OUTLINE:
            self._bookmarks += 1
            self.headings.append(self.page)
            key = f"h{self._bookmarks}"
            self.canv.bookmarkPage(key)
            self.canv.addOutlineEntry(flowable.getPlainText(), key,
                                      level=OUTLINE[flowable.style.name], closed=False)

    def _decorate(self, canv, doc):
        info = self.info or layout.PageInfo("", "", "", "", False)
        canv.saveState()
        _draw_band(canv, self.run, info, canv.getPageNumber(), self.total_pages)
        _draw_footer(canv, self.run, info)
        canv.restoreState()
        if canv.getPageNumber() == 1:
            canv.showOutline()


def _draw_band(canv, run: RunView, info: layout.PageInfo, page: int, total: int | None) -> None:
    width, height = PAGE_SIZE
    top = height - MARGIN
    canv.setFillColor(layout.NAVY)
    canv.rect(MARGIN, top - HEADER_HEIGHT + 3, CONTENT_WIDTH, HEADER_HEIGHT - 3, fill=1, stroke=0)
    left, right = MARGIN + 6, width - MARGIN - 6
    fonts = [(BOLD, 11), (BOLD, 9.5), (FONT, 8.5)]
    y = top - 15
    for i, ((font, size), (text, note)) in enumerate(zip(fonts, band_rows(run, info, page,
                                                                           total),
                                                         strict=True)):
        # The right-hand note (page, dates, status) is kept whole where it fits in 55 % of
        # the band; the left text gets the rest and is cut with an ellipsis if it must be.
        note_font, note_size = (BOLD, 8) if i == 2 else (FONT, 8.5)
        note = _fit(note, note_font, note_size, CONTENT_WIDTH * 0.55)
        room = CONTENT_WIDTH - 24 - stringWidth(note, note_font, note_size)
        canv.setFillColorRGB(1, 1, 1)
        canv.setFont(font, size)
        canv.drawString(left, y, _fit(text, font, size, room))
        if i == 2:
            canv.setFillColorRGB(*(ALARM_TEXT if info.alarm else OK_TEXT))
        canv.setFont(note_font, note_size)
        canv.drawRightString(right, y, note)
        y -= 19 if i == 0 else 17


def band_rows(run: RunView, info: layout.PageInfo, page: int | str,
              total: int | None) -> list[tuple[str, str]]:
    """The header band's three lines, (left text, right-hand note): what every renderer
    puts at the top of a page."""
    dev = run.device
    return [(spec_band(run, info), f"Page {page} of {total or '?'}"),
            (f"{info.section} — {info.subtitle}", _run_dates(run)),
            (f"DUT: {dev.model}   S/N {dev.serial}   FW {dev.firmware}", info.status)]


def spec_band(run: RunView, info: layout.PageInfo) -> str:
    """The specification a page reports against: an RWSW test's pages name the RWSW spec
    (its title as the run recorded it) beside the PTS one whose purge and steady-state rule
    it uses."""
    rwsw = {t.typed.rwsw_spec for t in run.tests if isinstance(t.typed, RwswParameters)} - {None}
    if info.section.startswith("RWSW") and len(rwsw) == 1:
        return f"{rwsw.pop()} (+ {run.spec_title})"
    return f"SNIA SSS PTS — {run.spec_title}"


def footer_left(run: RunView) -> str:
    return f"snia-pts {__version__}  run {run.run_id}  from run.json + ledger.jsonl only"


def _draw_footer(canv, run: RunView, info: layout.PageInfo) -> None:
    width = PAGE_SIZE[0]
    y = MARGIN + FOOTER_HEIGHT - 12
    canv.setStrokeColor(layout.NAVY)
    canv.setLineWidth(0.6)
    canv.line(MARGIN, y + 9, width - MARGIN, y + 9)
    canv.setFillColor(layout.NAVY)
    canv.setFont(BOLD, 8.5)
    canv.drawCentredString(width / 2, y, _fit(info.footer, BOLD, 8.5, CONTENT_WIDTH * 0.6))
    canv.setFont(FONT, 7)
    left = footer_left(run)
    canv.drawString(MARGIN, y - 11, left)
    # The verdict on every page: a page shown on its own must not pass for a compliant run.
    verdict = run.verdict
    canv.setFillColor(layout.GREEN if verdict.compliant else layout.RED)
    canv.setFont(BOLD, 7)
    room = CONTENT_WIDTH - stringWidth(left, FONT, 7) - 4 * mm
    canv.drawRightString(width - MARGIN, y - 11, footer_verdict(verdict, room))


def footer_verdict(verdict, room: float | None = None) -> str:
    """The verdict and why, as far as it fits in `room` points (None: whole): "NOT A
    COMPLIANT RUN — 9 deviation(s) from the specification (listed), see page 1" (a count of
    reasons said less than the reasons)."""
    if verdict.compliant:
        return verdict.text
    tail = ", see page 1"
    why = f"{verdict.text} — {'; '.join(verdict.reasons)}"
    if room is not None:
        why = _fit(why, BOLD, 7, room - stringWidth(tail, BOLD, 7))
    return why + tail


def _run_dates(run: RunView) -> str:
    started = fmt.iso_utc(run.started)
    if run.finished is None:
        return f"Run started {started}"
    finished = fmt.utc(run.finished)
    if not started.endswith(" UTC"):
        return f"Run {started} to {finished}"
    if finished[:10] == started[:10]:
        finished = finished[11:]       # same day: time only
    return f"Run {started[:-4]} to {finished}"


def _fit(text: str, font: str, size: float, width: float) -> str:
    """Cut `text` with an ellipsis so that it fits `width` points (header lines never wrap)."""
    if stringWidth(text, font, size) <= width:
        return text
    while text and stringWidth(text + "…", font, size) > width:
        text = text[:-1]
    return text + "…"

