"""Capturing a drive on another host (`ssh://[USER@]HOST[:PORT]/dev/NAME`).

The tracefs instance lives on the DUT host; an agent there (python3 from the host's own
system, stdlib only: pts/workload/capture/tracefs.py's source plus the loop below, sent as
`python3 -c` over the suite's OpenSSH wrapper) makes it and hands over the ring buffer's
binary pages; the spool, decoding, pairing and the capture file stay here. Protocol: a
JSON request line on the agent's stdin; a JSON reply line on its stdout, followed by the
byte blobs whose sizes it lists.

Cleanup does not depend on this side: the agent removes its instance when its stdin closes
(this process ended, however it ended, or the connection dropped), on SIGTERM/SIGINT, and
removes leftovers of dead agents when it starts, as a local capture does. The ssh client
here gets SIGTERM when this process dies (kill -9 too: pts.tools.commands.on_parent_death):
the closed stdin alone does not end it (it waits for the agent, over a connection that may
hang).
"""

from __future__ import annotations

import inspect
import json
import os
import signal
import subprocess
import time

from pts.tools import commands, hosts
from pts.workload.capture import ringbuf, tracefs

AGENT = '''

def _reply(obj, blobs=()):
    obj["sizes"] = [len(b) for b in blobs]
    out = sys.stdout.buffer
    out.write(json.dumps(obj).encode() + b"\\n")
    for blob in blobs:
        out.write(blob)
    out.flush()


def _agent(dev_t, buffer_kb, writeback):
    if os.geteuid() != 0:
        _reply({"error": "capturing needs root on the DUT host: connect as root "
                         "(ssh://root@HOST/dev/NAME)"})
        return
    try:
        root = find_tracefs()
        clean_leftovers(root)
        with signals_raise(), Instance(root, dev_t, buffer_kb,
                                       writeback=writeback) as inst:
            ev = inst.path / "events"
            formats = inst.formats()
            _reply({"path": str(inst.path), "ncpus": inst.ncpus, "kernel": inst.kernel,
                    "names": list(formats)}, list(formats.values()))
            for line in sys.stdin:
                req = json.loads(line)
                op = req["op"]
                if op == "start":
                    _reply({"now": inst.start()})
                elif op == "stop":
                    inst.stop()
                    _reply({})
                elif op == "read":
                    _reply({}, inst.read_pages(req["most"], req.get("full", False)))
                elif op == "lost":
                    _reply({"lost": inst.lost()})
                elif op == "comms":
                    _reply({"comms": inst.comms()})
                else:
                    _reply({})
                    break
    except (TracefsError, Interrupted) as exc:
        _reply({"error": str(exc)})


import json, sys
_agent(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1")
'''


REMOTE_MOST = 2048          # pages per CPU per request (8 MiB of 4 KiB pages)


class RemoteInstance:
    """The live source (source.Source, as tracefs.Instance) on the DUT host, through its
    agent."""

    def __init__(self, remote: hosts.Remote, dev_t: int, buffer_kb: int,
                 writeback: bool = True):
        self.remote = remote
        self.dev_t = dev_t
        self.buffer_kb = buffer_kb
        self.writeback = writeback
        self.proc: subprocess.Popen | None = None
        self.offset = 0          # remote CLOCK_MONOTONIC minus ours

    def __enter__(self) -> RemoteInstance:
        script = inspect.getsource(tracefs) + AGENT
        argv = self.remote.ssh_argv(["python3", "-c", script, str(self.dev_t),
                                     str(self.buffer_kb), "1" if self.writeback else "0"])
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE,
                                     preexec_fn=commands.on_parent_death(signal.SIGTERM))
        try:
            head, blobs = self._recv()
        except BaseException:
            self.close()
            raise
        self.path = head["path"]
        self.ncpus = int(head["ncpus"])
        self.kernel = head["kernel"]          # the DUT host's, whose tracefs records
        self._formats = dict(zip(head["names"], blobs, strict=True))
        texts = {name: blob.decode() for name, blob in self._formats.items()}
        self.layout = ringbuf.Layout.read(
            *(texts[name] for name in tracefs.REQUIRED_LAYOUTS),
            where=f"{self.remote.target}:{self.path}",
            extra={name.removesuffix(".format"): text for name, text in texts.items()
                   if name not in tracefs.REQUIRED_LAYOUTS})
        return self

    def _recv(self) -> tuple[dict, list[bytes]]:
        line = self.proc.stdout.readline()
        if not line:
            err = self.proc.stderr.read().decode(errors="replace").strip()
            raise tracefs.TracefsError(
                f"{self.remote.target}: the capture agent stopped ({err.splitlines()[-1:]}); "
                "the DUT host needs python3 and ssh access as root")
        head = json.loads(line)
        if "error" in head:
            raise tracefs.TracefsError(f"{self.remote.target}: {head['error']}")
        blobs = [self.proc.stdout.read(n) for n in head.get("sizes", [])]
        return head, blobs

    def _call(self, **req) -> tuple[dict, list[bytes]]:
        self.proc.stdin.write(json.dumps(req).encode() + b"\n")
        self.proc.stdin.flush()
        return self._recv()

    def start(self) -> int:
        """Turn tracing on; returns the remote CLOCK_MONOTONIC ns event times count from."""
        before = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        now = self._call(op="start")[0]["now"]
        after = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        self.offset = now - (before + after) // 2
        return now

    def clock(self) -> int:
        return time.clock_gettime_ns(time.CLOCK_MONOTONIC) + self.offset

    def stop(self) -> None:
        self._call(op="stop")

    def read_pages(self, most: int, full: bool = False) -> list[bytes]:
        return self._call(op="read", most=most, full=full)[1]

    def formats(self) -> dict[str, bytes]:
        return dict(self._formats)

    def pages_to(self, files: list[int], partial: bool) -> int:
        """As tracefs.Instance.pages_to, the pages coming over ssh (the agent splices the
        filled ones on the DUT host, whose python3 >= 3.10; an older one reads every page,
        partly filled ones too: more spool bytes, the same events)."""
        moved = 0
        for fd, blob in zip(files, self.read_pages(REMOTE_MOST, full=not partial),
                            strict=True):
            view = memoryview(blob)
            while view:
                view = view[os.write(fd, view):]
            moved += len(blob)
        return moved

    def lost(self) -> int:
        return self._call(op="lost")[0]["lost"]

    def comms(self) -> dict[str, str]:
        """The DUT host's tasks' names (tracefs.task_names, there)."""
        return self._call(op="comms")[0]["comms"]

    def close(self) -> None:
        """Ends the agent, which removes its instance (closing its stdin suffices)."""
        if self.proc is None:
            return
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def __exit__(self, *exc) -> None:
        self.close()
