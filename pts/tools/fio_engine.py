"""fio's I/O engine options (--ioengine, --io-poll: issue 33 §2) and what an engine does
to a job that the suite must not let pass silently."""

from __future__ import annotations

import re

# --ioengine / --io-poll (pts.config.settings.IO_ENGINES): each engine's [global] options, in
# place of GLOBAL_OPTIONS' ioengine. io_uring with its two set-up savings: fixedbufs (buffers
# registered once, no per-I/O page mapping) and registerfiles (no per-I/O fd lookup); both
# checked with fio 3.33 on a loop device over /dev/shm and on the emulated SSD's loop device.
# Polled completion (hipri) needs the device's poll queues (pts.device.platform_device.
# check_poll refuses it before anything is written otherwise).
IO_URING = {"ioengine": "io_uring", "fixedbufs": "1", "registerfiles": "1"}
ENGINE_KEYS = frozenset(IO_URING) | {"hipri"}


# fio before 3.39 (commit af0ad0f, "engines/io_uring: don't mess with non power-of-2 queue
# depth") raises a job's iodepth to the next power of two under io_uring: measured here with
# fio 3.33, iodepth 6 ran 7.47 I/Os in flight (Little's law over fio's latency; libaio 5.97)
# and fio's own depth distribution had half its time at 8 or more.
IO_URING_EXACT_DEPTH = (3, 39)


def version_tuple(version: str) -> tuple[int, ...]:
    """"fio-3.33" -> (3, 33); () when fio named no version."""
    m = re.search(r"(\d+)\.(\d+)", version)
    return (int(m.group(1)), int(m.group(2))) if m else ()


def rounds_depths(engine: dict[str, str], version: str) -> bool:
    """Whether this engine under this fio runs a non-power-of-two iodepth higher than asked
    (io_uring before fio 3.39: IO_URING_EXACT_DEPTH)."""
    return engine.get("ioengine") == "io_uring" and \
        version_tuple(version) < IO_URING_EXACT_DEPTH


def rounded_depths(text: str, engine: dict[str, str], version: str) -> list[int]:
    """The iodepths of job file `text` that this fio would run higher than asked. `text`
    may be indented (--dry-run's plan prints job files indented)."""
    if not rounds_depths(engine, version):
        return []
    depths = {int(v) for v in re.findall(r"^\s*iodepth=(\d+)\s*$", text, re.M)}
    return sorted(d for d in depths if d & (d - 1))


def rounded_depth_error(depths: list[int], version: str, where: str = "",
                        tests: dict[int, list[str]] | None = None) -> str:
    """Why such a job file is refused, naming the depths (and `tests`: the tests that run
    each) and the fix; `where`: whose fio it is (the DUT host's for an ssh:// drive)."""
    ups = ", ".join(f"{d} as {1 << (d - 1).bit_length()}"
                    + (f" in {', '.join(tests[d])}" if tests and tests.get(d) else "")
                    for d in depths)
    return (f"--ioengine io_uring: {version or 'this fio'}{where} runs a non-power-of-two "
            f"iodepth at the next power of two ({ups}; fixed in fio 3.39), so the drive would "
            "see more I/Os in flight than the test asks: run with --ioengine libaio, or "
            "install fio 3.39 or later")


def engine_options(ioengine: str = "libaio", io_poll: bool = False) -> dict[str, str]:
    """fio's engine options for --ioengine/--io-poll (libaio: the PTS readings' engine)."""
    if ioengine == "libaio":
        return {"ioengine": "libaio"}
    return IO_URING | ({"hipri": "1"} if io_poll else {})
