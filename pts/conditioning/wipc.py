"""Workload-independent preconditioning (WIPC, PTS 2.0.2 §3.3): write capacity_multiple x
the ActiveRange with SEQ writes of the WIPC block size, at the test's TC and QD.

With several threads each writes its own slice of the ActiveRange (no thread rewrites the
whole range, which would multiply the bytes written by TC). fio's JSON must show exactly
the planned bytes, else the preconditioning did not happen as the spec requires.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pts.tools.fio import Fio, FioError, Job


class PreconditioningError(RuntimeError):
    pass


@dataclass(frozen=True)
class WipcPlan:
    jobs: tuple[Job, ...]
    bytes_expected: int
    tail_bytes: int          # end of the ActiveRange shorter than one block, not written


def plan_wipc(active_range_bytes: int, block_size: int, multiple: int, threads: int,
              queue_depth: int) -> WipcPlan:
    blocks = active_range_bytes // block_size
    if blocks < threads:
        raise PreconditioningError(f"ActiveRange of {active_range_bytes} bytes is too small "
                                   f"for {threads} threads of {block_size}-byte writes")
    per, extra = divmod(blocks, threads)
    jobs, offset = [], 0
    for k in range(threads):
        n = per + (1 if k < extra else 0)
        jobs.append(Job(f"wipc{k}", "write", block_size, queue_depth, offset=offset,
                        size=n * block_size, loops=multiple))
        offset += n * block_size
    return WipcPlan(tuple(jobs), multiple * blocks * block_size,
                    active_range_bytes - blocks * block_size)


def run_wipc(fio: Fio, device_path: str, plan: WipcPlan, out_dir: Path):
    result = fio.run(device_path, list(plan.jobs), out_dir, "wipc")
    written = result.summary.write.io_bytes
    if written != plan.bytes_expected:
        raise PreconditioningError(f"WIPC wrote {written} bytes, planned {plan.bytes_expected} "
                                   f"(fio output {result.json_path})")
    return result


__all__ = ["FioError", "PreconditioningError", "WipcPlan", "plan_wipc", "run_wipc"]
