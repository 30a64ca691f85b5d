"""`python -m pts serve [REPORTS_DIR ...] [--host 127.0.0.1] [--port 8080] [--auth-file FILE]`:
the lab dashboard over the run folders under REPORTS_DIR (default: reports), served by
uvicorn. Read-only: it never writes into a run folder and never touches a device. Beyond
loopback it does not start without --auth-file (pts.serve.auth)."""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path

from pts.config import margins
from pts.serve import access, state

GRACEFUL_SHUTDOWN_S = 3      # seconds open event streams get to close at Ctrl-C/SIGTERM
DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8080
STARTUP_FAILURE = 3           # uvicorn.run's exit status when the app did not start


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Serve a dashboard of the run folders (and several-device session folders) under "
        "REPORTS_DIR: the runs list (filters: model, serial, firmware, host, test, "
        "verdict, state, start date; from the results index (--index, $PTS_INDEX, or "
        "REPORTS_DIR/index.sqlite when there is one: an SQLite file or a PostgreSQL database), "
        "kept level with the folders as they change: `python -m pts index REPORTS_DIR` makes "
        "it; else read from the folders), each "
        "run's tests, warnings and deviations, a running run's live state (server-sent "
        "events as its ledger grows), a finished run's report as HTML, the PDF, run.json, "
        "ledger.jsonl and the export JSON/CSV as downloads, and /metrics in the Prometheus "
        "text format. Read-only: nothing is written into a run folder (the HTML report is "
        "built in memory), no device is touched; only files under REPORTS_DIR are served. "
        "Listening beyond this machine (--host other than 127.0.0.0/8, ::1 or localhost) "
        f"needs --auth-file ({access.DOC}).")
    p.add_argument("reports_dirs", metavar="REPORTS_DIR", nargs="*", default=["reports"],
                   help="folders holding run folders (default: reports)")
    p.add_argument("--host", default=DEFAULT_HOST,
                   help=f"address to listen on (default {DEFAULT_HOST}: this host only; "
                        "0.0.0.0 serves every network the host is on, and then --auth-file "
                        "is required)")
    p.add_argument("--auth-file", metavar="FILE", default=None,
                   help="HTTP basic auth for every page, download and /metrics: FILE holds "
                        "user:password lines (# comments; passwords of at least "
                        f"{access.MIN_PASSWORD} characters, stored as given), readable by its "
                        "owner only (chmod 600, else refused). Required unless --host is "
                        "loopback; enforced there too when given. Refused requests are "
                        f"logged to stderr (client, path). {access.DOC}")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"port (default {DEFAULT_PORT}; 0: a free one the system picks, "
                        "printed with the address)")
    p.add_argument("--index", metavar="FILE|URL", default=None,
                   help="the results index to list the runs from: an SQLite file (or the "
                        "folder holding index.sqlite) or a lab's PostgreSQL database as "
                        "postgresql://USER[:PASSWORD]@HOST[:PORT]/DBNAME (psycopg 3: pip "
                        "install 'snia-pts[postgresql]'); kept level with REPORTS_DIR's "
                        "folders as they change (docs/index.md). Default: $PTS_INDEX, else "
                        "REPORTS_DIR/index.sqlite when there is one, else the folders are read")
    p.add_argument("--margins", metavar="FILE", default=None,
                   help="the release gate's margins (the history page's gate and /metrics' "
                        "pts_release_gate_*, as the index keeps them): a TOML file in percent "
                        "(default = N, [metric] and [unit] tables), read before the server "
                        "starts; default: the built-in ones (pts/config/margins.py; "
                        "docs/history.md)")
    p.add_argument("--stale-after", type=float, default=state.STALE_AFTER, metavar="SECONDS",
                   help="a run whose session has not ended counts as running while its "
                        "ledger.jsonl or commands.log was written within this many seconds, "
                        f"else as stopped (default {state.STALE_AFTER:g}: a pipelined IOPS "
                        "round at spec settings writes about an hour apart)")


def run(args: argparse.Namespace) -> int:
    missing = [d for d in args.reports_dirs if not Path(d).is_dir()]
    if missing:
        print(f"serve: not a folder: {', '.join(missing)} (give the --reports-dir of your "
              "runs, default reports)", file=sys.stderr)
        return 2
    try:
        credentials = access.required(args.host, args.auth_file,
                                      host_option=f"--host {args.host}",
                                      file_option="--auth-file")
    except access.AuthError as exc:
        print(f"serve: {exc}", file=sys.stderr)
        return 2
    try:
        gate_margins = margins.load(args.margins) if args.margins else None
    except margins.MarginsError as exc:
        print(f"serve: --margins: {exc}; fix the file or leave --margins out for the "
              "built-in margins (docs/history.md, \"The release gate\")", file=sys.stderr)
        return 2
    import uvicorn

    from pts.serve.app import create_app

    # --port 0: a port the system picks, taken here so that the address printed names it (a
    # script or a test reads it there; a port probed free first may be taken by another
    # program before the bind). A port given is bound by uvicorn, as always.
    sock = None
    if args.port == 0:
        try:
            sock = listen(args.host, 0)
        except OSError as exc:
            print(f"serve: cannot listen on {args.host} ({exc.strerror or exc})",
                  file=sys.stderr)
            return 2
    app = create_app(args.reports_dirs, stale_after=args.stale_after, credentials=credentials,
                     index_at=args.index, margins=gate_margins)
    handler = access.log_to(sys.stderr) if credentials is not None else None
    if app.state.indexed is None:          # once: how to list many runs fast
        print(f"snia-pts dashboard: {app.state.folder_note}", file=sys.stderr, flush=True)
    port = args.port if sock is None else sock.getsockname()[1]
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"snia-pts dashboard: http://{shown}:{port}/ "
          f"({', '.join(str(Path(d).resolve()) for d in args.reports_dirs)}; "
          + (f"basic auth, {len(credentials.users)} user(s) of {credentials.source})"
             if credentials else "no auth: this host only)"), flush=True)
    # An open page holds an event stream that never ends by itself: without a limit, Ctrl-C
    # (or SIGTERM) would wait for every browser tab to close.
    try:
        if sock is None:
            uvicorn.run(app, host=args.host, port=args.port, log_level="warning",
                        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S)
            return 0
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning",
                                               timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S))
        try:
            server.run(sockets=[sock])
        except KeyboardInterrupt:
            pass
        return 0 if server.started else STARTUP_FAILURE
    finally:
        if sock is not None:
            sock.close()
        if handler is not None:
            access.remove_log(handler)


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port (port 0: one the system picks)."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET,
                         socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock
