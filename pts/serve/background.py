"""`pytest pts/ ... --serve [HOST:]PORT`: the dashboard beside a run, served from a thread of
the pytest process over its --reports-dir, from the session's start to its end.

The same app as `python -m pts serve` (pts.serve.app): read-only, it reads the run's ledger
as any other reader does, so the run's own code path is unchanged. The port is bound before
anything touches a device, so a port in use stops the session with a clear error instead of
after a day of measurement; so are the credentials --serve-auth-file gives (pts.serve.auth:
required beyond loopback). Refused requests are written to the terminal as they happen,
through a copy of stderr taken at bind time, before pytest captures the tests' output."""

from __future__ import annotations

import logging
import os
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from pts.serve import access
from pts.serve.cli import DEFAULT_HOST, GRACEFUL_SHUTDOWN_S

STOP_WAIT_S = GRACEFUL_SHUTDOWN_S + 5     # then the daemon thread is left to the exit


class ServeError(Exception):
    pass


def parse_address(text: str) -> tuple[str, int]:
    """PORT or HOST:PORT (127.0.0.1 unless a host is given)."""
    host, _, port = text.rpartition(":")
    host = host.strip("[]") or DEFAULT_HOST
    try:
        number = int(port)
    except ValueError:
        number = -1
    if not 0 <= number < 65536:      # 0: a free port the system picks (the URL names it)
        raise ServeError(f"--serve {text}: give a port (1-65535, or 0 for a free one) or "
                         "HOST:PORT, e.g. --serve 8080 or --serve 0.0.0.0:8080")
    return host, number


@dataclass
class Bound:
    """The port taken and the credentials read, before the session touches a device."""
    sock: socket.socket
    credentials: access.Credentials | None
    log: TextIO | None          # the terminal, for refused requests (with credentials)

    def close(self) -> None:
        self.sock.close()
        if self.log is not None:
            self.log.close()


@dataclass
class Background:
    server: object              # uvicorn.Server
    thread: threading.Thread
    url: str
    bound: Bound
    handler: logging.Handler | None

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(STOP_WAIT_S)
        if self.handler is not None:
            access.remove_log(self.handler)
        self.bound.close()


def bind(address: str, auth_file: str | None = None) -> Bound:
    """The listening socket and credentials for --serve ADDRESS [--serve-auth-file FILE], or
    a ServeError naming the problem."""
    host, port = parse_address(address)
    try:
        credentials = access.required(host, auth_file, host_option=f"--serve {address}",
                                    file_option="--serve-auth-file")
    except access.AuthError as exc:
        raise ServeError(str(exc)) from None
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ServeError(f"--serve {address}: cannot listen on {host}:{port} "
                         f"({exc.strerror or exc}); choose another port, or stop what "
                         "holds it") from None
    sock.listen(64)
    # fd 2 is the terminal now (pytest_configure); later pytest redirects it per test
    log = os.fdopen(os.dup(2), "w", buffering=1) if credentials is not None else None
    return Bound(sock, credentials, log)


def start(bound: Bound, reports_dir: Path) -> Background:
    """Serve the dashboard over `reports_dir` on the bound socket from a daemon thread."""
    import uvicorn

    from pts.serve.app import create_app

    sock = bound.sock
    app = create_app([reports_dir], credentials=bound.credentials)
    handler = access.log_to(bound.log) if bound.log is not None else None
    config = uvicorn.Config(app, log_level="warning", lifespan="off",
                            timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S)
    server = uvicorn.Server(config)     # not the main thread: it leaves signals to pytest
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]},
                              name="pts-serve", daemon=True)
    thread.start()
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if sock.family == socket.AF_INET6 else host
    return Background(server, thread, f"http://{shown}:{port}/", bound, handler)
