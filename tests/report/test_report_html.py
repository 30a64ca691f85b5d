"""`python -m pts report RUN --html` (issue 22): report.html says what report.pdf says, from
the same story. The stored reference run (every test type) rendered both ways: each HTML
page has the band of the PDF page it names, the same SNIA header block cells, and every
figure of its tables is on that PDF page (or the pages it continues onto); charts are SVG
drawn from the same figures; the file is self-contained and a drive's strings are text."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest
from reportlab.platypus import Image, Table

from pts.cli.main import main
from pts.report import document
from pts.report.document import build_html, story_for
from pts.report.renderers.contents import Contents
from pts.report.renderers.html import UnknownFlowable, _Page, markup
from pts.report.renderers.layout import PageMarker, SvgChart
from pts.stored.data import load_run
from tests.support import headers, snapshots

pytestmark = pytest.mark.needs("pdftotext")

NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
VOID = {"br", "img", "hr", "wbr", "col"}        # HTML elements without an end tag
# The PDF page's body between its band and its footer, in points from the top of the A4
# page (pdftotext -bbox): the band's last line stands at 87-88 pt, the footer's caption at
# 771 pt and its line at 783 pt; the reference report's body words lie between 113 and 755.
BODY_TOP, BODY_BOTTOM = 100, 765


class Sections(HTMLParser):
    """Per <section id="page-N">: its band's rows (the texts of their spans), its tables
    (rows of cell texts), its images' sources, and the text of its body (<div
    class="content">, between band and footer; every element's words apart)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.pages: dict[int, dict] = {}
        self.page: dict = {}
        self.text: list[str] | None = None
        self.in_band = False
        self.in_body = 0          # depth inside the page's <div class="content">

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if self.in_body:
            self.page["body"].append(" ")
            self.in_body += tag not in VOID
        elif tag == "div" and a.get("class") == "content":
            self.in_body = 1
        if tag == "section":
            self.page = {"band": [], "tables": [], "imgs": [], "body": []}
            self.pages[int(a["id"].split("-")[1])] = self.page
        elif tag == "header":
            self.in_band = True
        elif tag == "div" and self.in_band:
            self.page["band"].append([])
        elif tag == "span" and self.in_band or tag == "td":
            self.text = []
        elif tag == "table":
            self.page["tables"].append([])
        elif tag == "tr":
            self.page["tables"][-1].append([])
        elif tag == "img":
            self.page["imgs"].append(a["src"][:30])
        elif tag == "br" and self.text is not None:
            self.text.append(" ")          # a line break in the PDF: words apart

    def handle_endtag(self, tag):
        if self.in_body:
            self.page["body"].append(" ")
            self.in_body -= 1
        if tag == "header":
            self.in_band = False
        elif tag == "span" and self.in_band:
            self.page["band"][-1].append(norm("".join(self.text)))
            self.text = None
        elif tag == "td" and self.text is not None:
            self.page["tables"][-1][-1].append(norm("".join(self.text)))
            self.text = None

    def handle_data(self, data):
        if self.in_body:
            self.page["body"].append(data)
        if self.text is not None:
            self.text.append(data)


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\xa0", " ")).strip()


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    """`report RUN --html` on a copy of the reference run, once for the module, watching the
    SVG layout it writes the HTML from (document.layout_with_svg's answer: for
    test_the_html_layout_has_the_pdfs_pages, without laying the report out again)."""
    folder = tmp_path_factory.mktemp("html") / "run"
    shutil.copytree(snapshots.REFERENCE_RUN, folder)
    svg: list = []
    layout_with_svg = document.layout_with_svg

    def watched(run):
        svg.append(layout_with_svg(run))
        return svg[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(document, "layout_with_svg", watched)
        assert main(["report", str(folder), "--html"]) == 0
    assert len(svg) == 1
    return folder, svg[0]


@pytest.fixture(scope="module")
def both(cli_run):
    folder, _ = cli_run
    page = (folder / "report.html").read_text(encoding="utf-8")
    parsed = Sections()
    parsed.feed(page)
    return folder, page, parsed.pages, headers.pdf_pages(folder / "report.pdf")


@pytest.fixture(scope="module")
def story(reference_render):
    """The reference run's story (charts as PNG), as the plain render laid it out (the
    story_for of tests/report/conftest.render_watched)."""
    return reference_render.story


def test_one_html_page_per_page_marker_named_by_its_pdf_page(both, story):
    _, _, pages, pdf = both
    markers = [f for f in story if isinstance(f, PageMarker)]
    assert len(pages) == len(markers) == 89   # + the OCP requirements page
    assert list(pages) == sorted(pages) and max(pages) <= len(pdf) == 113  # OCP: pp. 18-29


def test_every_table_row_of_the_story_is_an_html_row(both, story):
    """Tables in story order (the contents is a table of its own): the same row counts."""
    _, _, pages, _ = both
    html_rows = [len(t) for p in pages.values() for t in p["tables"]]
    story_rows = [len(f.entries) + 1 if isinstance(f, Contents) else len(f._cellvalues)
                  for f in story if isinstance(f, Table | Contents)]
    assert html_rows == story_rows and len(story_rows) == 151   # + the OCP page's four


def test_each_band_is_the_pdf_pages_band(both):
    """Title and page, section and run dates, DUT and status: each text of the HTML band is
    on the PDF page it names, as words of its top band (above the header block)."""
    _, _, pages, pdf = both
    for n, page in pages.items():
        top = norm(" ".join(w[3] for w in pdf[n - 1] if w[1] < 90))
        assert [len(row) for row in page["band"]] == [2, 2, 2], n
        for text in (t for row in page["band"] for t in row):
            assert text and (text in top or cut_in(text, top)), (n, text, top)


def cut_in(text: str, top: str) -> bool:
    """The PDF band cuts a line that does not fit with "…" (pdf._fit): a prefix of at least
    half of `text` followed by the ellipsis."""
    return any(top.endswith(text[:k] + "…") or text[:k] + "… " in top
               for k in range(len(text) // 2, len(text)))


def test_every_header_block_cell_is_the_pdfs(both):
    _, _, pages, pdf = both
    checked = 0
    for n, page in pages.items():
        block = headers.header_block(pdf[n - 1])
        if block is None:
            continue
        first = page["tables"][0]
        assert [norm(c) for c in first[1]] == [norm(c) for c in block], n
        checked += 1
    assert checked == 84          # every test page (the summary, contents, readings: none)


def test_every_table_figure_is_on_the_pdf_pages_it_came_from(both):
    _, _, pages, pdf = both
    starts = sorted(pages)
    for i, n in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(pdf) + 1
        pdf_numbers = Counter(NUMBER.findall(" ".join(w[3] for p in pdf[n - 1:end - 1]
                                                      for w in p)))
        html_numbers = Counter(NUMBER.findall(" ".join(c for t in pages[n]["tables"]
                                                       for row in t for c in row)))
        missing = html_numbers - pdf_numbers
        assert not missing, (n, dict(missing))


def test_every_number_of_the_pdf_pages_body_is_on_the_html_page_and_back(both):
    """Both directions, counted: the numbers of the body of the PDF pages an HTML page
    stands for (header block, tables, prose; band and footer aside: the band is
    test_each_band_is_the_pdf_pages_band's, and the PDF cuts a long band or caption with
    "...") are the numbers of that HTML page's body, each as many times. So a figure the HTML
    leaves out (a row, a paragraph, a cell) fails here, as does one the PDF lacks. Charts are
    images in the PDF (no text) and SVG in the HTML: not compared here."""
    _, _, pages, pdf = both
    starts = sorted(pages)
    for i, n in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(pdf) + 1
        words = [w[3] for k in range(n, end) for w in pdf[k - 1]
                 if BODY_TOP <= w[1] < BODY_BOTTOM]
        in_pdf = Counter(NUMBER.findall(" ".join(words)))
        in_html = Counter(NUMBER.findall(norm("".join(pages[n]["body"]))))
        assert in_pdf == in_html, (n, "PDF only:", dict(in_pdf - in_html),
                                   "HTML only:", dict(in_html - in_pdf))
    assert len(starts) == 89 and sum(sum(Counter(NUMBER.findall(norm("".join(
        p["body"])))).values()) for p in pages.values()) > 5000


def test_charts_are_svg_one_per_pdf_chart(both, story):
    _, _, pages, _ = both
    images = [f for f in story if isinstance(f, Image)]
    imgs = [src for p in pages.values() for src in p["imgs"]]
    assert len(imgs) == len(images) == 66
    assert all(src.startswith("data:image/svg+xml;base64,") for src in imgs)


def test_self_contained_no_script_no_fetch(both):
    _, page, _, _ = both
    assert "<script" not in page.lower() and "<link" not in page.lower()
    refs = re.findall(r'(?:src|href)="([^"]*)"', page)
    assert refs and all(r.startswith(("data:", "#")) for r in refs), \
        [r for r in refs if not r.startswith(("data:", "#"))][:3]


def test_the_pdf_written_with_the_html_is_the_plain_pdf(both, reference_pdf):
    folder, _, _, _ = both
    assert reference_pdf.read_bytes() == (folder / "report.pdf").read_bytes()


def test_a_drives_strings_are_text_never_markup(tmp_path):
    from tests.support.synthetic.runfactory import build_run
    folder = build_run(tmp_path)
    info = json.loads((folder / "run.json").read_text())
    info["device"]["model"] = "<script>alert(1)</script> & <b>x</b>"
    (folder / "run.json").write_text(json.dumps(info))
    page = build_html(load_run(folder))
    assert "<script" not in page and "<b>x</b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;x&lt;/b&gt;" in page


def test_markup_keeps_only_safe_tags():
    assert markup('<b>a</b> &lt;i&gt; <font color="#ff0000">r</font><br/>'
                  '<a href="javascript:x">l</a><img src=x onerror=y>') == \
        '<b>a</b> &lt;i&gt; <span style="color:#ff0000">r</span><br>l'
    assert markup('<font color="red;background:url(x)">t</font>') == "<span>t</span>"


def test_an_unknown_flowable_is_an_error_not_a_silent_gap():
    from reportlab.platypus import HRFlowable
    with pytest.raises(UnknownFlowable, match="no HTML for a HRFlowable"):
        _Page(None).flowable(HRFlowable())


def test_cli_prints_both_paths(tmp_path, capsys):
    from tests.support.synthetic.runfactory import build_run
    folder = build_run(tmp_path)
    assert main(["report", str(folder), "--html"]) == 0
    out = capsys.readouterr().out.split()
    assert out == [str((folder / "report.pdf").resolve()), str((folder / "report.html")
                                                                  .resolve())]
    assert Path(out[1]).read_text().startswith("<!DOCTYPE html>")


def test_the_html_layout_has_the_pdfs_pages(cli_run, reference_render):
    """layout_with_svg lays out the story with SVG charts only sized: every heading and page
    marker lands on the page it has in the PDF (each chart takes its PNG's room). The SVG
    layout is the one `report --html` wrote its page from, the PDF's that of the plain
    render of the same run (both watched, tests/report/conftest.render_watched)."""
    pdf_laid, (html_laid, html_story) = reference_render.laid, cli_run[1]
    assert (html_laid.headings, html_laid.markers, html_laid.total) == \
        (pdf_laid.headings, pdf_laid.markers, pdf_laid.total)
    assert html_laid.pdf == b"" and sum(isinstance(f, SvgChart) for f in html_story) == 66


def test_an_svg_chart_is_never_drawn_into_a_pdf(tmp_path):
    """A story built under chart_base.svg_instead laid out as a real PDF is an error, never a
    PDF with blank room where its charts should be."""
    from pts.report.renderers import chart_base, pdf
    from tests.support.synthetic.runfactory import build_run
    run = load_run(build_run(tmp_path))
    token = chart_base.svg_instead(True)
    try:
        story = story_for(run)
    finally:
        chart_base.svg_instead_reset(token)
    assert any(isinstance(f, SvgChart) for f in story)
    with pytest.raises(TypeError, match="an SVG chart in a PDF"):
        pdf.lay_out(run, story, total_pages=None)
    assert pdf.lay_out(run, story_for(run), total_pages=None).page > 1
