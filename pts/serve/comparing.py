"""The dashboard's compare view: runs picked on the runs list, compared by the code of
`python -m pts compare` (pts.compare): the same story as compare.pdf, rendered as HTML by
the report's HTML renderer, and compare.pdf / compare.csv as downloads. Refusals are those of
the command: fewer than two runs, a folder that cannot be read, runs of different specs or
settings unless allow_mixed, no test in every run, a test whose figures this version does not
know (pts.stored.figures.UnknownFamily: its message, a 400 page, not a server error)."""

from __future__ import annotations

from pts.compare import pdf
from pts.compare.data import Comparison, compare_views
from pts.report.renderers import chart_base, html
from pts.serve.index import Entry, RunIndex
from pts.serve.kept import Kept
from pts.stored.figures import UnknownFamily

MAX_RUNS = 8                # a comparison of more is unreadable (and slow to draw)
CACHE = 4                   # compare pages kept in memory


class CompareError(Exception):
    """Why these runs cannot be compared, for the page (the command's wording)."""


def picked(index: RunIndex, ids: list[str]) -> list[Entry]:
    if not 2 <= len(ids) <= MAX_RUNS:
        raise CompareError(f"pick 2 to {MAX_RUNS} runs on the runs list to compare them "
                           f"({len(ids)} picked)")
    entries = []
    for run_id in ids:
        entry = index.get(run_id)
        if entry is None or entry.kind != "run" or entry.view is None:
            why = entry.error if entry is not None and entry.error else "not a run folder"
            raise CompareError(f"{run_id}: cannot be compared ({why})")
        entries.append(entry)
    return entries


def comparison(entries: list[Entry], allow_mixed: bool) -> Comparison:
    try:
        c = compare_views([e.view for e in entries])
    except UnknownFamily as exc:        # names the test and the catalogue to extend
        raise CompareError(str(exc)) from None
    if c.differences and not allow_mixed:
        raise CompareError("the runs differ in spec or settings: " + "; ".join(c.differences))
    if not c.common:
        raise CompareError("no test is present in every run: nothing to compare ("
                           + "; ".join(c.left_out) + ")")
    return c


class Pages:
    """The HTML of compare views, kept while their runs' ledgers do not change."""

    def __init__(self):
        self.kept: Kept[str] = Kept(CACHE)

    def html(self, entries: list[Entry], c: Comparison) -> str:
        key = tuple((e.id, e.key) for e in entries)
        return self.kept.get(key, key, lambda: self._built(c))

    @staticmethod
    def _built(c: Comparison) -> str:
        token = chart_base.svg_instead(True)
        try:
            story = pdf.story(c)
        finally:
            chart_base.svg_instead_reset(token)
        return html.fragment(story)
