"""Server-sent events of runs in flight: one poll of a run's ledger.jsonl per watched run,
however many pages watch it. Every `interval` seconds the poll stats the folder (through the
index, which re-reads the run only when run.json or ledger.jsonl changed); when the live
state (pts.serve.state.live) changes, every subscriber gets it. The poll stops when its last
subscriber goes; a subscriber's stream ends after the run stops running."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator

from starlette.concurrency import run_in_threadpool

from pts.serve import state
from pts.serve.index import RunIndex

POLL_SECONDS = 1.0
END = None            # queued after the last state of a run that stopped running


class _Watch:
    def __init__(self):
        self.queues: set[asyncio.Queue] = set()
        self.task: asyncio.Task | None = None
        self.last: dict | None = None


class LiveFeeds:
    def __init__(self, index: RunIndex, interval: float = POLL_SECONDS,
                 stale_after: float = state.STALE_AFTER):
        self.index, self.interval, self.stale_after = index, interval, stale_after
        self.watches: dict[str, _Watch] = {}
        self.polls = 0                   # ledger polls made (all runs): tests read it

    async def events(self, entry_id: str) -> AsyncIterator[str]:
        """The event stream of one run: `data: {json}` blocks, the current state first."""
        queue: asyncio.Queue = asyncio.Queue()
        watch = self.watches.setdefault(entry_id, _Watch())
        watch.queues.add(queue)
        if watch.task is None or watch.task.done():
            watch.task = asyncio.create_task(self._poll(entry_id, watch))
        elif watch.last is not None:
            queue.put_nowait(watch.last)
        try:
            while (message := await queue.get()) is not END:
                yield f"data: {json.dumps(message, allow_nan=False, default=str)}\n\n"
            yield "event: end\ndata: {}\n\n"
        finally:
            watch.queues.discard(queue)
            if not watch.queues:
                self.watches.pop(entry_id, None)
                if watch.task is not None:
                    watch.task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await watch.task

    async def _poll(self, entry_id: str, watch: _Watch) -> None:
        while True:
            self.polls += 1
            entry = await run_in_threadpool(self.index.get, entry_id)
            now = state.live(entry, self.stale_after) if entry is not None else \
                {"id": entry_id, "state": state.ERROR, "error": "run folder gone"}
            if now != watch.last:
                watch.last = now
                for q in list(watch.queues):
                    q.put_nowait(now)
            if now["state"] != state.RUNNING:
                for q in list(watch.queues):
                    q.put_nowait(END)
                return
            await asyncio.sleep(self.interval)
