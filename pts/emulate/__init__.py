"""Emulated SSD: a kernel block device (loop over a FUSE file) whose speed follows an FTL model.

Fresh out of the box it writes fast; as it fills, greedy garbage collection amplifies writes
and random-write IOPS fall to a lower steady state; a whole-device discard restores FOB.

    from pts import emulate
    inst = emulate.start("256M", profile="default")     # inst.device == "/dev/loopN"
    emulate.read_stats(inst)                            # FTL counters (waf, gc_runs, ...)
    emulate.stop(inst.device)

Modules: ftl (the model, pure), throttle (model time -> wall time), fusefs (the FUSE
filesystem), daemon (its process), lifecycle (start/stop/list/reap), cli (`python -m pts
emulate`). Names are imported lazily: the daemon must fork before numpy is loaded.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "start": "lifecycle", "stop": "lifecycle", "list_instances": "lifecycle",
    "read_stats": "lifecycle", "find": "lifecycle", "identity": "lifecycle",
    "reap_stale": "lifecycle", "parse_size": "lifecycle", "Instance": "lifecycle",
    "EmulateError": "lifecycle", "PROFILES": "ftl", "Profile": "ftl", "FTL": "ftl",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"pts.emulate.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'pts.emulate' has no attribute {name!r}")
