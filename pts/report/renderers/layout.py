"""Building blocks of report pages: styles, headings, tables, images, and the page marker
that tells the page template what to print in the header band and footer.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

from reportlab.lib import colors
from reportlab.lib.enums import TA_CENTER
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.lib.units import mm
from reportlab.platypus import Flowable, Image, KeepTogether, PageBreak, Paragraph, Spacer, Table
from reportlab.platypus import TableStyle as _TableStyle

# the aspect ratio of charts unless told otherwise
from pts.report.renderers.chart_base import SIZE_INCHES

PAGE_SIZE = A4
MARGIN = 15 * mm
HEADER_HEIGHT = 24 * mm
FOOTER_HEIGHT = 12 * mm
CONTENT_WIDTH = PAGE_SIZE[0] - 2 * MARGIN

NAVY = colors.HexColor("#1f3a5f")
RED = colors.HexColor("#b00020")
GREEN = colors.HexColor("#1b7a34")
LIGHT = colors.HexColor("#eef2f7")

_base = getSampleStyleSheet()
STYLES = {
    # Heading names are the outline levels the document template bookmarks (pdf.OUTLINE).
    "h1": ParagraphStyle("h1", parent=_base["Heading1"], fontSize=15, leading=19,
                         spaceBefore=0, spaceAfter=6, textColor=NAVY),
    "h2": ParagraphStyle("h2", parent=_base["Heading2"], fontSize=11.5, leading=15,
                         spaceBefore=8, spaceAfter=4, textColor=NAVY),
    "body": ParagraphStyle("body", parent=_base["BodyText"], fontSize=9, leading=11.5),
    "small": ParagraphStyle("small", parent=_base["BodyText"], fontSize=7.5, leading=9.5),
    "cell": ParagraphStyle("cell", parent=_base["BodyText"], fontSize=8, leading=10),
    "cellb": ParagraphStyle("cellb", parent=_base["BodyText"], fontSize=8, leading=10,
                            fontName="Helvetica-Bold"),
    "verdict": ParagraphStyle("verdict", parent=_base["Title"], fontSize=26, leading=32,
                              alignment=TA_CENTER, spaceBefore=4, spaceAfter=6),
}


@dataclass(frozen=True)
class PageInfo:
    """What the header band and footer of a page say (see pdf.draw_page)."""

    section: str           # e.g. "IOPS" or "Run summary"
    subtitle: str          # e.g. "Steady State Convergence"
    footer: str            # plot / table title
    status: str            # right-hand note in the band: verdict or test status
    alarm: bool            # status printed as a warning (not compliant / not steady)


class PageMarker(Flowable):
    """Zero-size flowable: from here on, pages carry `info` in their header and footer."""

    def __init__(self, info: PageInfo):
        super().__init__()
        self.info = info

    def wrap(self, avail_width, avail_height):
        return 0, 0

    def draw(self):
        pass


def new_page(info: PageInfo, first: bool = False) -> list[Flowable]:
    return ([] if first else [PageBreak()]) + [PageMarker(info)]


def h1(text: str) -> Paragraph:
    return Paragraph(esc(text), STYLES["h1"])


def h2(text: str) -> Paragraph:
    return Paragraph(esc(text), STYLES["h2"])


def para(text: str, style: str = "body", markup: bool = False) -> Paragraph:
    """A paragraph of plain text (escaped), or of reportlab mini-markup if markup=True."""
    return Paragraph(text if markup else esc(text), STYLES[style])


def image(png: bytes, width: float = CONTENT_WIDTH,
          size_inches: tuple[float, float] = SIZE_INCHES) -> Flowable:
    """A chart scaled to `width`; size_inches is the figure size it was drawn at (aspect).
    A chart drawn as SVG (chart_base.svg_instead) becomes an SvgChart, for the HTML renderer."""
    height = width * size_inches[1] / size_inches[0]
    svg = getattr(png, "svg", None)
    if svg is not None:
        return SvgChart(svg, width, height)
    return Image(io.BytesIO(png), width=width, height=height)


class SvgChart(Flowable):
    """A chart as SVG text, in a story built for HTML (pts.report.renderers.html). Laid out,
    it takes the room of the same chart as PNG (pts.report.document.layout_with_svg: the
    page numbers), and draws nothing: only a layout-only pass may hold one."""

    def __init__(self, svg: str, width: float, height: float):
        super().__init__()
        self.svg, self.width, self.height = svg, width, height
        self.hAlign = "CENTER"             # as reportlab's Image

    def wrap(self, avail_width, avail_height):
        return self.width, self.height

    def draw(self):
        if not getattr(self.canv._doctemplate, "layout_only", False):
            raise TypeError("an SVG chart in a PDF: build the PDF's story without "
                            "chart_base.svg_instead")


def kv_table(rows: Sequence[tuple[str, str]], label_width: float = 50 * mm) -> Table:
    """Two columns: bold label, wrapped value."""
    data = [[para(k, "cellb"), para(v, "cell")] for k, v in rows]
    table = Table(data, colWidths=[label_width, CONTENT_WIDTH - label_width], hAlign="LEFT")
    table.setStyle(_TableStyle(_GRID + [("BACKGROUND", (0, 0), (0, -1), LIGHT)]))
    return table


def grid_table(header: Sequence[str], rows: Sequence[Sequence[str | Flowable]],
               col_widths: Sequence[float] | None = None, align_right_from: int = 99) -> Table:
    """A header row and data rows of text (or ready flowables); columns from
    `align_right_from` on hold numbers and are right-aligned."""
    number = ParagraphStyle("num", parent=STYLES["cell"], alignment=2)
    number_head = ParagraphStyle("numb", parent=STYLES["cellb"], alignment=2)
    data = [[Paragraph(esc(h), number_head if i >= align_right_from else STYLES["cellb"])
             for i, h in enumerate(header)]]
    for row in rows:
        data.append([v if isinstance(v, Flowable) else
                     Paragraph(esc(v), number if i >= align_right_from else STYLES["cell"])
                     for i, v in enumerate(row)])
    table = Table(data, colWidths=col_widths, hAlign="LEFT", repeatRows=1)
    table.setStyle(_TableStyle(_GRID + [("BACKGROUND", (0, 0), (-1, 0), LIGHT)]))
    return table


def verdict_cell(ok: bool | None) -> Paragraph | str:
    """PASS in green, FAIL in red; None for rows that are not a criterion."""
    if ok is None:
        return ""
    colour, word = (GREEN, "PASS") if ok else (RED, "FAIL")
    return para(f'<font color="#{colour.hexval()[2:]}"><b>{word}</b></font>', "cell", markup=True)


def keep(*flowables: Flowable) -> KeepTogether:
    return KeepTogether(list(flowables))


def gap(height: float = 4 * mm) -> Spacer:
    return Spacer(1, height)


_GRID = [
    ("GRID", (0, 0), (-1, -1), 0.4, colors.HexColor("#9aa7b8")),
    ("VALIGN", (0, 0), (-1, -1), "TOP"),
    ("TOPPADDING", (0, 0), (-1, -1), 2),
    ("BOTTOMPADDING", (0, 0), (-1, -1), 2),
]


def esc(text: str) -> str:
    """Paragraph text is XML-ish mini-markup: stored strings must not be read as tags."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
