"""What a live capture source is: the named table of operations every source fills (fio's
ioengines.h: struct ioengine_ops, one table per engine), declared as a typing.Protocol.

Two sources fill it: tracefs.Instance (a tracefs instance of our own on this host) and
remote.RemoteInstance (the same instance on a DUT host, through the agent remote.py sends
there). tracefs.py travels alone to that host and imports nothing of the project, so it does
not name this Protocol: it fills it structurally, and tests/workload/test_capture_source.py
holds both sources to every operation here, by name and parameters.

Who calls what: the capture loop (loop.spool) starts, polls and stops the source and moves
its pages into the spool; the assembly (record.capture) enters it, reads its kernel and
layouts, and leaves it (which removes the instance, whatever ended the capture).
"""

from __future__ import annotations

from typing import Protocol


class Source(Protocol):
    """A tracing instance of the kernel's block tracepoints for one device, live."""

    kernel: str          # the traced host's kernel release (an ssh:// DUT's, not ours)

    def __enter__(self) -> Source:
        """Make the instance (tracing off until `start`)."""
        ...

    def __exit__(self, *exc) -> None:
        """`close`."""
        ...

    def close(self) -> None:
        """Stop tracing and remove the instance (and end the agent of a remote one)."""
        ...

    @property
    def ncpus(self) -> int:
        """The ring buffer's CPUs: one page stream (and one spool file) each."""
        ...

    def formats(self) -> dict[str, bytes]:
        """The page and event layouts the pages decode with (tracefs.LAYOUT_FILES' names)."""
        ...

    def start(self) -> int:
        """Turn tracing on; the trace clock's ns the event times count from."""
        ...

    def stop(self) -> None:
        """Turn tracing off (the pages recorded stay to be read)."""
        ...

    def clock(self) -> int:
        """Now on the trace clock (CLOCK_MONOTONIC ns of the traced host)."""
        ...

    def read_pages(self, most: int, full: bool = False) -> list[bytes]:
        """Per CPU the pages ready now, at most `most` each (`full`: filled pages only)."""
        ...

    def pages_to(self, files: list[int], partial: bool) -> int:
        """Move each CPU's filled pages (with `partial`, then the partly filled ones too)
        to the open file of its index; never blocks; the bytes moved."""
        ...

    def lost(self) -> int:
        """Events the ring buffer lost so far, all CPUs."""
        ...

    def comms(self) -> dict[str, str]:
        """Every task's name now on the traced host (pid -> comm)."""
        ...
