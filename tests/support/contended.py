"""A lock that tells when a thread has to wait for it. A test that holds the code's lock and
starts another thread proves by it that the other thread reached the lock and waits there (an
event of the code under test) instead of concluding from "it did not finish within a second",
which a loaded machine also gives when the lock is gone: the thread had not run yet."""

from __future__ import annotations

import threading


class WatchedLock:
    """A real threading.Lock, as the code's `with lock:` uses it; `turn` is set when a thread
    finds it held and starts waiting (the test sets it too when its other thread finished
    without waiting: then either outcome ends the test's wait, however loaded the machine)."""

    def __init__(self):
        self._lock = threading.Lock()
        self.turn = threading.Event()
        self.waited = 0

    def __enter__(self):
        if not self._lock.acquire(blocking=False):
            self.waited += 1
            self.turn.set()              # held by another thread: this one waits from now on
            self._lock.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self._lock.release()
