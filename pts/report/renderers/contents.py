"""The contents table of the report: a flowable filled, when laid out, with the page of
every heading from the document being built (pass 2 of pts.report.document.layout_pdf: the
document's known_pages). It is layout machinery, as PageMarker is; the contents page itself
(which headings, its title) is pts.report.pages.toc."""

from __future__ import annotations

from reportlab.platypus import Flowable

from pts.report.renderers import layout
from pts.report.renderers.layout import CONTENT_WIDTH, mm, para


class Contents(Flowable):
    """The contents table, filled with page numbers from the document being built."""

    def __init__(self, entries: list[tuple[str, str]], first_index: int):
        super().__init__()
        self.entries = entries
        self.first_index = first_index     # how many h1 headings come before this table
        self._table = None

    def _make(self):
        known = getattr(getattr(self.canv, "_doctemplate", None), "known_pages", None) or []
        rows = []
        for i, (level, text) in enumerate(self.entries):
            n = self.first_index + i
            label = text if level == "h1" else para(f"&nbsp;&nbsp;&nbsp;&nbsp;{layout.esc(text)}",
                                                    "cell", markup=True)
            rows.append([label, str(known[n]) if n < len(known) else "?"])
        return layout.grid_table(["Section", "Page"], rows,
                                 col_widths=[CONTENT_WIDTH - 25 * mm, 25 * mm],
                                 align_right_from=1)

    def wrap(self, avail_width, avail_height):
        self._table = self._make()
        return self._table.wrapOn(self.canv, avail_width, avail_height)

    def split(self, avail_width, avail_height):
        if self._table is None:
            self._table = self._make()
        return self._table.split(avail_width, avail_height)

    def draw(self):
        self._table.drawOn(self.canv, 0, 0)
