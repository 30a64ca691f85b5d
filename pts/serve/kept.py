"""What the dashboard keeps in memory between requests (a run's HTML report, its convergence
chart, a compare view): the last few built, each as long as what it was built from is
unchanged (a run's ledger: its entry key), the least recently used dropped first.

Why a lock: the dashboard answers requests in several threads at once (Starlette runs each
page in a thread pool). Without one, a value dropped by one thread between another's look-up
and its move to the end was a KeyError there, and an eviction loop could see the dict change
under it. The lock is held for look-ups and stores only, never while a value is built (a
report takes seconds): two threads may build the same value once each, the later kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class Kept(Generic[V]):
    def __init__(self, size: int):
        self.size = size
        self._items: OrderedDict[Hashable, tuple[Hashable, V]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, name: Hashable, key: Hashable, build: Callable[[], V]) -> V:
        """The value kept under `name` if it was built for `key`, else build() kept."""
        with self._lock:
            found = self._items.get(name)
            if found is not None and found[0] == key:
                self._items.move_to_end(name)
                return found[1]
        value = build()
        with self._lock:
            self._items[name] = (key, value)
            self._items.move_to_end(name)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._items)
