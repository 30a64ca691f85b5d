"""What the dashboard keeps between requests (pts.serve.kept: a run's HTML report, its
convergence chart, a compare view): kept while its key holds, the least recently used
dropped first, and safe when requests run in several threads (issue 47 §1)."""

from __future__ import annotations

import threading
from collections import OrderedDict

from pts.serve import kept
from tests.support.contended import WatchedLock


def test_kept_while_its_key_holds_and_the_least_recently_used_dropped_first():
    built: list[str] = []

    def build(v):
        return lambda: built.append(v) or v

    k = kept.Kept(2)
    assert k.get("a", 1, build("a1")) == "a1" and k.get("a", 1, build("again")) == "a1"
    assert k.get("a", 2, build("a2")) == "a2"              # its run changed: built again
    k.get("b", 1, build("b1"))
    k.get("a", 2, build("again"))                          # a used last: b goes first
    k.get("c", 1, build("c1"))
    assert len(k) == 2 and k.get("a", 2, build("again")) == "a2"
    assert k.get("b", 1, build("b1 again")) == "b1 again"
    assert built == ["a1", "a2", "b1", "c1", "b1 again"]


def test_a_look_up_is_not_undone_by_another_request(monkeypatch):
    """Another request's store (which drops the value looked up: one value kept) while a
    look-up is between its hit and its move to the end waits for it; without the lock it
    dropped the value there, a KeyError in that request. Decided by the other request
    reaching the lock (it found it held and waits), not by its not finishing within a time."""
    other_done = threading.Event()
    lock = WatchedLock()

    class Interleaved(OrderedDict):
        hooked, moves = False, 0

        def move_to_end(self, key, last=True):
            Interleaved.moves += 1
            if Interleaved.moves == 2:        # the hit on "a": found, not yet returned
                Interleaved.hooked = True
                threading.Thread(target=other, daemon=True).start()
                # the other request waits at the lock, or (no lock) it has finished: a hang
                # bound only
                assert lock.turn.wait(120)
                assert not other_done.is_set(), "another request changed it mid-look-up"
                assert lock.waited == 1 and list(self) == ["a"]
            super().move_to_end(key, last)

    monkeypatch.setattr(kept, "OrderedDict", Interleaved)
    k = kept.Kept(1)
    k._lock = lock                            # the code's lock, watched

    def other():
        k.get("b", 1, lambda: "b")
        other_done.set()
        lock.turn.set()

    k.get("a", 1, lambda: "a")
    assert k.get("a", 1, lambda: "not kept") == "a" and Interleaved.hooked
    assert other_done.wait(120) and len(k) == 1 and k.get("b", 1, lambda: "again") == "b"
