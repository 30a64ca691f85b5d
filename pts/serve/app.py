"""`create_app(folders)`: the dashboard's routes (Starlette), read-only.

    /                          the runs list (filters: model, serial, firmware, host, test,
                               verdict, state, start date; pages of listing.PAGE_ROWS): from
                               the results index REPORTS_DIR/index.sqlite when there is one
                               (pts.serve.indexed), else from the folders (pts.serve.listing)
    /runs/<id>                 a run (or a several-device session); live part while it runs;
                               an NVMe drive's run: every OCP requirement ID judged
                               (pts.serve.ocp_section, as `qualify --ocp` and the report)
    /runs/<id>/events          server-sent events: its live state (pts.serve.live)
    /runs/<id>/report          its report as HTML (pts.report.document.build_html), cached
    /runs/<id>/convergence.svg its (current) test's tracking variables per round, cached
    /runs/<id>/files/<name>    report.pdf, run.json, ledger.jsonl, export.json, export.csv
    /compare?run=<id>&run=<id> the runs compared as compare.pdf shows them (pts.serve.comparing)
    /compare.pdf, /compare.csv the same comparison as `python -m pts compare` writes it
    /history?model=M[&firmware=A&firmware=B][&level=P]  a drive model's history and firmware
                               A against B, from the index (pts.index.history, as `python -m
                               pts history`; pts.serve.history_page)
    /metrics                   Prometheus text format (pts.serve.metrics)

<id> is the folder's path relative to the folder given (prefixed by the folder's number when
several are given); it is looked up in the index, never joined onto a path. Nothing is
written anywhere: the HTML report and the exports are built in memory. With `credentials`
(pts.serve.auth) every request, to any route or none, must carry them: the check is the app's
middleware, in front of the router, so a route added here cannot escape it.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlencode

import jinja2
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from pts.compare import cli as compare_cli
from pts.export import cli as export_cli
from pts.export.json_doc import finite, run_document
from pts.index import postgres
from pts.index.db import FILE_NAME, IndexUnusable
from pts.index.target import DEFAULT, place
from pts.report.document import build_html
from pts.serve import access, auth, comparing, convergence, listing, metrics, safe, state
from pts.serve.history_page import page_context
from pts.serve.index import Entry, RunIndex
from pts.serve.indexed import WATCH_SECONDS, IndexedRuns
from pts.serve.kept import Kept
from pts.serve.live import LiveFeeds
from pts.serve.ocp_section import section as ocp_section

TEMPLATES = Path(__file__).parent / "templates"
REPORT_CACHE = 8            # HTML reports kept in memory (a full run's is a few MB)
CHART_CACHE = 64            # convergence charts kept (tens of kB each)


def create_app(folders: list[str | Path], *, stale_after: float = state.STALE_AFTER,
               poll_seconds: float = 1.0,
               credentials: access.Credentials | None = None,
               watch_seconds: float = WATCH_SECONDS,
               index_at: str | None = None, margins=None) -> Starlette:
    """`index_at`: the results index to list the runs from (an SQLite file, a folder holding
    index.sqlite, or a postgresql:// URL: `serve --index`); None: $PTS_INDEX, else
    REPORTS_DIR/index.sqlite if it exists."""
    index = RunIndex(folders)
    indexed, folder_note = open_index(index, watch_seconds, index_at)
    if indexed is not None:          # the gate's margins (serve --margins; None: built in)
        indexed.margins = margins
    feeds = LiveFeeds(index, poll_seconds, stale_after)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True)
    pages = Jinja2Templates(env=env)
    reports: Kept[str] = Kept(REPORT_CACHE)
    charts: Kept[str | None] = Kept(CHART_CACHE)
    compare_pages = comparing.Pages()
    registry = metrics.registry(index, stale_after, indexed)
    env.globals.update(short=listing.short)

    def entry_or_404(request: Request) -> Entry:
        entry = index.get(request.path_params["id"])
        if entry is None:
            raise HTTPException(404, "no such run folder")
        return entry

    def runs(request: Request) -> Response:
        wanted = listing.wanted(request.query_params)
        found = indexed.listing(stale_after, wanted) if indexed is not None \
            else listing.from_folders(index, stale_after, wanted)
        kept = [(k, v) for k, v in wanted.raw.items() if v and k != "page"]

        def paging(n: int) -> str:
            return urlencode(kept + [("page", str(n))])

        return pages.TemplateResponse(request, "runs.html", {
            "listing": found, "wanted": wanted, "states": listing.LIST_STATES,
            "verdicts": listing.VERDICTS, "tests": found.tests, "paging": paging,
            "note": indexed.note() if indexed is not None else folder_note},
            status_code=400 if wanted.errors else 200)

    def run_page(request: Request) -> Response:
        entry = entry_or_404(request)
        name = "session.html" if entry.kind == "session" else "run.html"
        ocp = ocp_section(entry.view) if entry.kind == "run" else None
        return pages.TemplateResponse(request, name, {
            "row": listing.row(entry, stale_after, index), "run": entry.view, "entry": entry,
            "live": state.live(entry, stale_after), "devices": session_devices(entry, index),
            "ocp": ocp})

    async def events(request: Request) -> Response:
        entry = entry_or_404(request)
        return StreamingResponse(feeds.events(entry.id), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store"})

    def report(request: Request) -> Response:
        entry = entry_or_404(request)
        if entry.view is None:
            raise HTTPException(404, "no report: " + (entry.error or "not a run folder"))
        return HTMLResponse(reports.get(entry.id, entry.key, lambda: build_html(entry.view)))

    def convergence_svg(request: Request) -> Response:
        entry = entry_or_404(request)
        svg = charts.get(entry.id, entry.key, lambda: convergence.svg(entry.view)
                         if entry.view is not None else None)
        if svg is None:
            raise HTTPException(404, "no completed round to plot yet")
        return Response(svg, media_type="image/svg+xml", headers={"Cache-Control": "no-store"})

    def picked(request: Request) -> tuple[list[str], str, bool]:
        ids = request.query_params.getlist("run")
        allow = request.query_params.get("allow_mixed", "") not in ("", "0")
        query = urlencode([("run", i) for i in ids] + ([("allow_mixed", "1")] if allow else []))
        return ids, query, allow

    def compare_page(request: Request) -> Response:
        ids, query, allow = picked(request)
        context = {"ids": ids, "query": query, "error": None, "mixed": False, "body": ""}
        try:
            entries = comparing.picked(index, ids)
            c = comparing.comparison(entries, allow)
            context["body"] = compare_pages.html(entries, c)
        except comparing.CompareError as exc:
            context.update(error=str(exc), mixed="differ in spec" in str(exc))
        return pages.TemplateResponse(request, "compare.html", context,
                                      status_code=400 if context["error"] else 200)

    def compare_file(request: Request) -> Response:
        if request.path_params["kind"] not in ("pdf", "csv"):
            raise HTTPException(404, "compare.pdf or compare.csv")
        ids, _, allow = picked(request)
        try:
            c = comparing.comparison(comparing.picked(index, ids), allow)
        except comparing.CompareError as exc:
            raise HTTPException(400, str(exc)) from None
        if request.path_params["kind"] == "csv":
            return Response(compare_cli.to_csv(c), media_type="text/csv", headers={
                "Content-Disposition": 'attachment; filename="compare.csv"'})
        from pts.compare.pdf import build
        return Response(build(c), media_type="application/pdf", headers={
            "Content-Disposition": 'attachment; filename="compare.pdf"'})

    def files(request: Request) -> Response:
        entry = entry_or_404(request)
        name = request.path_params["name"]
        if entry.view is not None and name in safe.GENERATED:
            if name == "export.csv":
                return Response(export_cli.csv_text(entry.view), media_type="text/csv")
            body = json.dumps(finite(run_document(entry.view)), indent=1) + "\n"
            return Response(body, media_type="application/json")
        allowed = safe.RUN_FILES if entry.kind == "run" else safe.SESSION_FILES
        path = safe.stored_file(entry.folder, name, index.roots, allowed)
        if path is None:
            raise HTTPException(404, "no such file")
        return FileResponse(path, media_type=safe.MEDIA.get(path.suffix, "text/plain"),
                            filename=name)

    def history_view(request: Request) -> Response:
        context = page_context(request.query_params, indexed, folder_note, index.id_of,
                               margins)
        return pages.TemplateResponse(request, "history.html", context,
                                      status_code=400 if context["error"] else 200)

    def metrics_page(request: Request) -> Response:
        return Response(metrics.text(registry), media_type=metrics.CONTENT_TYPE)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        if indexed is not None:
            indexed.start()          # brought level now, then as the folders change
        try:
            yield
        finally:
            if indexed is not None:
                indexed.stop()

    app = Starlette(lifespan=lifespan, routes=[
        Route("/", runs),
        Route("/metrics", metrics_page),
        # pages without an icon of their own (the HTML report) make browsers ask for one
        Route("/favicon.ico", lambda request: Response(status_code=204)),
        Route("/compare", compare_page),
        Route("/compare.{kind:str}", compare_file),
        Route("/history", history_view),
        Route("/runs/{id:path}/events", events),
        Route("/runs/{id:path}/report", report),
        Route("/runs/{id:path}/convergence.svg", convergence_svg),
        Route("/runs/{id:path}/files/{name}", files),
        Route("/runs/{id:path}", run_page),
    ], middleware=auth.middleware(credentials))
    app.state.index, app.state.feeds, app.state.indexed = index, feeds, indexed
    app.state.folder_note = folder_note
    return app


NO_INDEX = ("Runs read from their folders (no results index {path}). With many runs, make "
            "one: `python -m pts index {root}`, then start the dashboard again: it lists the "
            "runs from the index and keeps it level with the folders (docs/index.md).")


def open_index(index: RunIndex, watch_seconds: float, given: str | None = None,
               environ: Mapping[str, str] = os.environ) -> tuple[IndexedRuns | None, str]:
    """The results index of the one folder served: `given` (serve --index), else $PTS_INDEX
    (pts.index.target.ENV: a lab's database, set once per host), else REPORTS_DIR/index.sqlite
    if it exists; or None and what the page says instead (why the folders are read)."""
    if len(index.roots) != 1:
        return None, (f"Runs read from their folders: the results index is used with one "
                      f"REPORTS_DIR ({len(index.roots)} given).")
    root = index.roots[0]
    found = place(given, root / FILE_NAME, environ)     # --index, $PTS_INDEX, beside
    chosen = found.where
    if found.source == DEFAULT:
        where = root / FILE_NAME
        if not where.is_file():
            return None, NO_INDEX.format(path=where, root=root)
    elif postgres.is_url(chosen):
        where = chosen
    else:
        where = Path(chosen) / FILE_NAME if Path(chosen).is_dir() else Path(chosen)
        if not where.is_file():
            return None, (f"Runs read from their folders: no results index at {where} "
                          f"({found.source}); make it with `python -m pts index {root}"
                          f"{'' if where == root / FILE_NAME else f' --index {where}'}`.")
    try:
        return IndexedRuns(root, where, index, watch_seconds), ""
    except IndexUnusable as exc:
        shown = postgres.redact(where) if isinstance(where, str) else where
        return None, (f"Runs read from their folders: the results index {shown} cannot be "
                      f"used ({exc}).")


def session_devices(entry: Entry, index: RunIndex) -> list[dict]:
    out = []
    for d in entry.session.get("devices") or ():
        if isinstance(d, dict):
            folder = d.get("run_folder")
            out.append({k: d.get(k) for k in ("label", "given", "refused", "exit_status")}
                       | {"run": index.id_of(folder) if isinstance(folder, str) else None,
                          "run_folder": folder})
    return out
