"""A replay's step logs served to fio while the steps run (issue 40 §3; the logs:
pts.testdefs.rwsw.replay_log). `Feed` serves each step's log to fio through a Unix socket
(fio 3.33 connects to a `read_iolog` that is a socket, iolog.c init_iolog_read; a FIFO would
lose its first 48 bytes to fio's blktrace probe, which opens the path and reads a trace
header before opening it again), read with `read_iolog_chunked=1` (about a second of I/Os
held by fio, not the whole log): nothing is written to disk, fio reads only the lines it
issues, and a step's log is made while that step runs, the next step's generator states
while the one before runs.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pts.testdefs.rwsw.replay_log import StepLog

# A Unix socket's path: at most 107 bytes (sockaddr_un.sun_path is 108 with its NUL).
SOCKET_PATH_MAX = 107


class FeedError(RuntimeError):
    """A step's log could not be served to fio (the message names the step and the cause)."""


class Feed:
    """Serves step logs to fio while the steps run: step k's log through a Unix socket
    listening at `logs[k][0]` (fio's `read_iolog` path), the steps in order, each made as
    fio reads it (`StepLog.chunks`), the next step's generator states prepared while a step
    runs. A step ends when fio closes its connection (its runtime over) or the log does.
    Nothing is written to disk; a socket file is removed when its step is over and all on
    exit (a stale one from a killed run is replaced). `stats`: per step what was made."""

    def __init__(self, logs: list[tuple[Path, StepLog]], poll_s: float = 0.2):
        self.logs, self.poll_s = logs, poll_s
        self.stats: list[dict] = [{} for _ in logs]
        self.error: FeedError | None = None
        self._stop = threading.Event()
        self._listeners: list[socket.socket] = []
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Feed:
        for path, _ in self.logs:
            if len(os.fsencode(path)) > SOCKET_PATH_MAX:
                raise FeedError(f"the step log socket {path} is longer than "
                                f"{SOCKET_PATH_MAX} bytes (a Unix socket's limit): set TMPDIR "
                                "to a shorter folder (e.g. TMPDIR=/tmp)")
        try:
            for path, _ in self.logs:
                Path(path).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                Path(path).unlink(missing_ok=True)        # a killed run's stale socket
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self._listeners.append(sock)
                sock.bind(os.fspath(path))
                sock.listen(1)
                sock.settimeout(self.poll_s)
            t = time.perf_counter()
            if self.logs:
                self.logs[0][1].prepare()
                self.stats[0]["prepare_s"] = time.perf_counter() - t
        except BaseException:
            self._close()
            raise
        self._thread = threading.Thread(target=self._serve, name="iolog-feed", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, kind, exc, tb) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._close()
        if self.error is not None and kind is None:
            raise self.error

    def _close(self) -> None:
        for sock in self._listeners:
            sock.close()
        for path, _ in self.logs:
            Path(path).unlink(missing_ok=True)

    def _serve(self) -> None:
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="iolog-prepare")
        ahead: dict[int, object] = {}
        try:
            for k, (path, log) in enumerate(self.logs):
                conn = self._accept(k)
                if conn is None:
                    return
                with conn:
                    if k + 1 < len(self.logs):          # the next step's, while this runs
                        ahead[k + 1] = pool.submit(self._prepare, k + 1)
                    if k in ahead:
                        ahead.pop(k).result()
                    self._stream(k, conn, log)
                self._listeners[k].close()
                Path(path).unlink(missing_ok=True)
        except _Stopped:
            return
        except Exception as exc:                          # noqa: BLE001 - kept, re-raised
            self.error = FeedError(f"step {k + 1}'s iolog ({self.logs[k][0]}): {exc}")
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _prepare(self, k: int) -> None:
        t = time.perf_counter()
        self.logs[k][1].prepare()
        self.stats[k]["prepare_s"] = time.perf_counter() - t

    def _accept(self, k: int) -> socket.socket | None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listeners[k].accept()
            except TimeoutError:
                continue
            conn.settimeout(self.poll_s)
            return conn
        return None

    def _stream(self, k: int, conn: socket.socket, log: StepLog) -> None:
        """Send step k's log until fio closes the connection or the log ends; record the
        I/O lines made, the bytes sent and the time spent making them."""
        made = sent = 0
        make_s, t0 = 0.0, time.perf_counter()
        ended = "fio closed"
        pieces = log.chunks()
        try:
            while True:
                t = time.perf_counter()
                piece = next(pieces, None)
                make_s += time.perf_counter() - t
                if piece is None:
                    ended = "log end"
                    break
                made += piece.count(b"\n")
                view = memoryview(piece)
                while view:
                    if self._stop.is_set():
                        raise _Stopped
                    try:
                        n = conn.send(view)
                    except TimeoutError:
                        continue
                    view, sent = view[n:], sent + n
        except (BrokenPipeError, ConnectionResetError):
            pass
        head = 3 + (ended == "log end")                   # add, open (and close) lines
        self.stats[k] |= {"step": k + 1, "lines_made": made - head, "bytes_sent": sent,
                          "make_s": make_s, "seconds": time.perf_counter() - t0,
                          "ended": ended}


class _Stopped(Exception):
    """The feed was closed while a step was being served (the replay stopped)."""
