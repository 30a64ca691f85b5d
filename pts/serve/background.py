"""`pytest pts/ ... --serve [HOST:]PORT`: the dashboard beside a run, served from a thread of
the pytest process over its --reports-dir, from the session's start to its end.

The same app as `python -m pts serve` (pts.serve.app): read-only, it reads the run's ledger
as any other reader does, so the run's own code path is unchanged. The port is bound before
anything touches a device, so a port in use stops the session with a clear error instead of
after a day of measurement."""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass
from pathlib import Path

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
    if not 0 < number < 65536:
        raise ServeError(f"--serve {text}: give a port (1-65535) or HOST:PORT, e.g. "
                         "--serve 8080 or --serve 0.0.0.0:8080")
    return host, number


@dataclass
class Background:
    server: object              # uvicorn.Server
    thread: threading.Thread
    url: str

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(STOP_WAIT_S)


def bind(address: str) -> socket.socket:
    """The listening socket for --serve ADDRESS, or a ServeError naming the problem."""
    host, port = parse_address(address)
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
    return sock


def start(sock: socket.socket, reports_dir: Path) -> Background:
    """Serve the dashboard over `reports_dir` on the bound `sock` from a daemon thread."""
    import uvicorn

    from pts.serve.app import create_app

    config = uvicorn.Config(create_app([reports_dir]), log_level="warning", lifespan="off",
                            timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S)
    server = uvicorn.Server(config)     # not the main thread: it leaves signals to pytest
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]},
                              name="pts-serve", daemon=True)
    thread.start()
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if sock.family == socket.AF_INET6 else host
    return Background(server, thread, f"http://{shown}:{port}/")
