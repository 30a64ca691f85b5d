"""The session's selected PTS tests, planned as --dry-run plans them (each test's plan
function, pts.testdefs.registry; dry_run writes them), and what the plans refuse before
anything is written: io_uring under a fio before 3.39 with a non-power-of-two iodepth
(pts.tools.fio_engine).

Fio.run_document refuses such a job file too, but only when that job is about to run: the
full DIRTH, CBW and RWSW-DIRTH grids have QD 6 in them, so a run would have purged and
preconditioned the drive first. The plan knows every job's iodepth at session start.
"""

from __future__ import annotations

import re

from pts.cli import remote
from pts.conditioning import latency_monitor
from pts.config.settings import Settings
from pts.device import safety
from pts.device.identity import BlockDevice
from pts.device.remote import fio_version
from pts.procedure import plan
from pts.procedure.runner import TestDefinitionError
from pts.testdefs import registry
from pts.tools.fio_engine import (
    engine_options,
    rounded_depth_error,
    rounded_depths,
    rounds_depths,
)


def item_plan(settings: Settings, dev: BlockDevice, item) -> list[str] | None:
    """The --dry-run lines of a pytest item's PTS test (None: the item is not one)."""
    marker = item.get_closest_marker("pts")
    if marker is None:
        return None
    variant = getattr(item, "callspec", None) and item.callspec.params.get("pts_variant")
    try:
        return registry.get(marker.args[0]).plan(settings, dev, variant)
    except TestDefinitionError as exc:
        return [f"REFUSED at run time: {exc}"]


def dry_run(settings: Settings, dev: BlockDevice, items, write, destructive: bool) -> None:
    """--dry-run: the device, its safety verdict and every item's plan, written by `write`;
    nothing is written to the device, nothing run."""
    write(f"DRY RUN on {dev.path}: nothing is written, nothing is run.")
    for line in remote.dry_run_lines(dev):
        write(line)
    reasons = safety.in_use_reasons(dev)
    write("safety: " + ("REFUSED whatever the flags: " + "; ".join(reasons) if reasons else
                        "not in use" + ("" if destructive else
                                        "; a real run needs --destructive")))
    for line in latency_monitor.dry_run_lines(dev, destructive, reasons):   # a write too
        write(line)
    planned: list[str] = []
    for item in items:
        write(f"--- {item.nodeid}")
        lines = item_plan(settings, dev, item)
        if lines is None:
            write("(not a PTS test: no @pytest.mark.pts; nothing to plan)")
            continue
        planned += lines
        for line in lines:
            write(line)
    for line in plan.total_lines(planned):
        write(line)


def refusal(settings: Settings, dev: BlockDevice, items, version: str | None = None
            ) -> str | None:
    """Why the selected `items` cannot run with the run's engine on the fio that runs the
    drive's I/O (`version`, default: read now; the DUT host's for an ssh:// drive): None
    when they can. No plan is built unless the engine and fio round depths at all."""
    if settings.ioengine != "io_uring":              # libaio runs every depth as asked
        return None
    engine = engine_options(settings.ioengine, settings.io_poll)
    version = fio_version(dev) if version is None else version
    if not rounds_depths(engine, version):
        return None
    tests: dict[int, list[str]] = {}
    for item in items:
        lines = item_plan(settings, dev, item) or []
        for depth in rounded_depths("\n".join(lines), engine, version):
            tests.setdefault(depth, []).append(_name(item))
    if not tests:
        return None
    where = f" on the DUT host {dev.remote.host}" if dev.remote is not None else ""
    return rounded_depth_error(sorted(tests), version, where, tests) + \
        " (refused before anything is written)"


def _name(item) -> str:
    """test_dirth, test_throughput[throughput-128k]: the item's name as pytest shows it."""
    return re.sub(r"^.*::", "", item.nodeid)
