"""The report as one self-contained HTML page: the SAME story as the PDF (the page builders'
flowables, pts.report.document.story_for), rendered to HTML instead of laid out by reportlab, so
the two can never say different things (issue 22: one page model, two renderers).

- a page marker starts a page: its header band (pdf.band_rows: the PDF page it landed on),
  then what follows up to the next marker, then its footer (title, run, verdict and why);
- a paragraph keeps its style (h1/h2 headings get anchors; the contents links to them); its
  reportlab mini-markup is re-read and only <b>, <i>, <br>, <sup>, <sub> and coloured spans
  are kept, every text escaped again (a drive's strings are text, never markup);
- a table becomes an HTML table (its repeated header rows a <thead>, right-aligned number
  columns, the cell backgrounds of its style);
- a chart is the SVG drawn by the same matplotlib code as the PDF's PNG (chart_base.svg_instead);
  inline as data: URIs, so the file needs nothing else (no script, no network).
Any other flowable is an error: a new kind of content must be given its HTML here.
"""

from __future__ import annotations

import base64
import html
import re
from html.parser import HTMLParser

from reportlab.lib import colors
from reportlab.platypus import Flowable, Image, PageBreak, Paragraph, Spacer, Table
from reportlab.platypus.flowables import KeepTogether

from pts import __version__
from pts.report.renderers.contents import Contents
from pts.report.renderers.layout import PageMarker, SvgChart
from pts.report.renderers.pdf import band_rows, footer_left, footer_verdict

HEADINGS = ("h1", "h2")
KEPT_TAGS = {"b": "b", "i": "i", "br": "br", "super": "sup", "sup": "sup", "sub": "sub",
             "strong": "b", "em": "i"}
COLOUR = re.compile(r"^#?[0-9a-zA-Z]{1,20}$")
CSS = """
body{font-family:Helvetica,Arial,sans-serif;font-size:13px;color:#111;background:#e8ebf0;
margin:0}
.page{background:#fff;max-width:960px;margin:14px auto;padding:0 0 8px;
box-shadow:0 1px 4px #0003}
.band{background:#1f2f4f;color:#fff;padding:6px 10px}
.band div{display:flex;justify-content:space-between;gap:12px}
.band .r0{font-weight:bold;font-size:15px}.band .r1{font-weight:bold}
.band .ok{color:#b3ffbf;font-weight:bold}.band .alarm{color:#ffbfbf;font-weight:bold}
.content{padding:6px 14px}
table{border-collapse:collapse;margin:6px 0;font-size:11px}
td,th{border:1px solid #9aa7b8;padding:2px 4px;vertical-align:top;text-align:left}
thead td{background:#dde4ee;font-weight:bold}
td.num{text-align:right}
img.chart{width:100%;height:auto}
footer{border-top:1px solid #1f2f4f;margin:6px 14px 0;padding-top:3px;font-size:11px}
footer .title{text-align:center;font-weight:bold;color:#1f2f4f}
footer .line{display:flex;justify-content:space-between;gap:12px}
footer .ok{color:#117a2f;font-weight:bold}footer .alarm{color:#b00020;font-weight:bold}
"""


class UnknownFlowable(TypeError):
    """The story holds a flowable this renderer has no HTML for."""


def render(laid, story: list[Flowable]) -> str:
    """The HTML page of `story` as `laid` out as PDF (pts.report.document.Laid: the run view,
    the page of every page marker and heading, the page count)."""
    page = _Page(laid)
    for f in story:
        page.add(f)
    dev = laid.view.device
    title = html.escape(f"SNIA SSS PTS report: {dev.model} {dev.serial}")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"generator\" content=\"snia-pts {html.escape(__version__)}\">"
            f"<title>{title}</title><style>{CSS}</style></head><body>\n"
            + page.close() + "</body></html>\n")


def fragment(story: list[Flowable]) -> str:
    """The HTML of a story without page markers (e.g. compare.pdf's, pts.compare.pdf.story),
    each flowable as in the report; for a page of the dashboard."""
    page = _Page(None)
    for f in story:
        page.add(f)
    return page.close()


class _Page:
    """The HTML of the story, page by page (a page: one page marker's content)."""

    def __init__(self, laid):
        self.laid = laid
        self.out: list[str] = []
        self.marker = -1            # the index of the current page marker
        self.heading = 0            # the index of the next heading (the PDF's order)
        self.info = None

    def add(self, f: Flowable) -> None:
        if isinstance(f, PageMarker):
            self._end_page()
            self.marker += 1
            self.info = f.info
            self.out.append(self._band())
        elif isinstance(f, PageBreak | Spacer):
            return
        else:
            self.out.append(self.flowable(f))

    def close(self) -> str:
        self._end_page()
        return "".join(self.out)

    def _band(self) -> str:
        page = self.laid.markers[self.marker]
        rows = band_rows(self.laid.view, self.info, page, self.laid.total)
        lines = []
        for n, (text, note) in enumerate(rows):
            cls = f' class="{"alarm" if self.info.alarm else "ok"}"' if n == 2 else ""
            lines.append(f'<div class="r{n}"><span>{html.escape(text)}</span>'
                         f'<span{cls}>{html.escape(note)}</span></div>')
        return (f'<section class="page" id="page-{page}"><header class="band">'
                + "".join(lines) + '</header><div class="content">\n')

    def _end_page(self) -> None:
        if self.info is None:
            return
        run = self.laid.view
        verdict = run.verdict
        cls = "ok" if verdict.compliant else "alarm"
        self.out.append(
            f'</div><footer><div class="title">{html.escape(self.info.footer)}</div>'
            f'<div class="line"><span>{html.escape(footer_left(run))}</span>'
            f'<span class="{cls}">{html.escape(footer_verdict(verdict))}</span></div>'
            "</footer></section>\n")
        self.info = None

    # ------------------------------------------------------------------ flowables
    def flowable(self, f) -> str:
        if isinstance(f, Paragraph):
            return self.paragraph(f)
        if isinstance(f, Contents):
            return self.contents(f)
        if isinstance(f, Table):
            return self.table(f)
        if isinstance(f, SvgChart):
            return svg_image(f.svg)
        if isinstance(f, Image):
            return image(f)
        if isinstance(f, KeepTogether):
            return "".join(self.flowable(g) for g in f._content)
        if isinstance(f, PageBreak | Spacer):
            return ""
        raise UnknownFlowable(f"no HTML for a {type(f).__name__} in the report's story: "
                              "give it one in pts.report.html")

    def paragraph(self, p: Paragraph) -> str:
        style = p.style.name
        text = markup(p.text)
        if style in HEADINGS:
            n = self.heading
            self.heading += 1
            return f'<{style} id="h{n}">{text}</{style}>\n'
        return f'<p class="{html.escape(style)}">{text}</p>\n'

    def cell(self, value) -> str:
        if value is None:
            return ""
        if isinstance(value, str):
            return html.escape(value)
        if isinstance(value, list | tuple):
            return "".join(self.cell(v) for v in value)
        if isinstance(value, Paragraph):
            return markup(value.text)
        return self.flowable(value)

    def table(self, t: Table) -> str:
        head = getattr(t, "repeatRows", 0) or 0
        head = head if isinstance(head, int) else len(head)
        backgrounds = _backgrounds(t)
        rows = []
        for r, row in enumerate(t._cellvalues):
            cells = []
            for c, value in enumerate(row):
                attrs = ""
                if isinstance(value, Paragraph) and value.style.alignment == 2:
                    attrs += ' class="num"'
                if (r, c) in backgrounds:
                    attrs += f' style="background:{backgrounds[(r, c)]}"'
                cells.append(f"<td{attrs}>{self.cell(value)}</td>")
            rows.append("<tr>" + "".join(cells) + "</tr>")
        body = "".join(rows[head:])
        thead = f"<thead>{''.join(rows[:head])}</thead>" if head else ""
        return f"<table>{thead}<tbody>{body}</tbody></table>\n"

    def contents(self, c: Contents) -> str:
        rows = []
        for i, (level, text) in enumerate(c.entries):
            n = c.first_index + i
            page = self.laid.headings[n] if n < len(self.laid.headings) else "?"
            pad = "" if level == "h1" else "&nbsp;" * 4
            rows.append(f'<tr><td>{pad}<a href="#h{n}">{html.escape(text)}</a></td>'
                        f'<td class="num">{page}</td></tr>')
        return ("<table><thead><tr><td>Section</td><td class=\"num\">Page</td></tr></thead>"
                f"<tbody>{''.join(rows)}</tbody></table>\n")


def svg_image(svg: str) -> str:
    data = base64.b64encode(svg.encode()).decode()
    return f'<img class="chart" alt="chart" src="data:image/svg+xml;base64,{data}">\n'


def image(img: Image) -> str:
    data = base64.b64encode(img.filename.getvalue()).decode()
    return f'<img class="chart" alt="chart" src="data:image/png;base64,{data}">\n'


def _backgrounds(t: Table) -> dict[tuple[int, int], str]:
    """The cell backgrounds of a table's style, as CSS colours."""
    out: dict[tuple[int, int], str] = {}
    rows, cols = len(t._cellvalues), len(t._cellvalues[0]) if t._cellvalues else 0
    for cmd in getattr(t, "_bkgrndcmds", []):
        _, (c0, r0), (c1, r1), colour = cmd[:4]
        if colour is None or isinstance(colour, list | tuple) and len(colour) != 3:
            continue
        css = colors.toColor(colour).hexval().replace("0x", "#")
        for r in range(r0 % rows if r0 < 0 else r0, (r1 % rows if r1 < 0 else r1) + 1):
            for c in range(c0 % cols if c0 < 0 else c0, (c1 % cols if c1 < 0 else c1) + 1):
                out[(r, c)] = css
    return out


class _Markup(HTMLParser):
    """reportlab paragraph mini-markup -> safe HTML: text escaped, a few tags kept."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.open: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in KEPT_TAGS:
            name = KEPT_TAGS[tag]
            self.out.append(f"<{name}>")
            if name != "br":
                self.open.append(name)
            else:
                self.out[-1] = "<br>"
        elif tag == "font":
            colour = dict(attrs).get("color") or ""
            style = f' style="color:{colour}"' if COLOUR.match(colour) else ""
            self.out.append(f"<span{style}>")
            self.open.append("span")

    def handle_startendtag(self, tag, attrs):
        if tag == "br":
            self.out.append("<br>")

    def handle_endtag(self, tag):
        name = "span" if tag == "font" else KEPT_TAGS.get(tag)
        if name and name != "br" and name in self.open:
            while self.open:
                top = self.open.pop()
                self.out.append(f"</{top}>")
                if top == name:
                    break

    def handle_data(self, data):
        self.out.append(html.escape(data).replace("\xa0", "&nbsp;"))

    def text(self) -> str:
        return "".join(self.out) + "".join(f"</{t}>" for t in reversed(self.open))


def markup(text: str) -> str:
    parser = _Markup()
    parser.feed(text)
    parser.close()
    return parser.text()
