"""Workload-independent preconditioning (WIPC, PTS 2.0.2 §3.3): write capacity_multiple x
the USER CAPACITY with SEQ writes of the WIPC block size, over the ActiveRange, at the
test's TC and QD.

The reading (pts-digest §11 item 6): the spec's words are "Write 2X User Capacity w/ 128KiB
sequential writes" (test pseudo-code, step 2) "to the entire ActiveRange without LBA
restrictions" (PTS 2.0.2). User Capacity is a defined term (the whole user LBA range), so
the amount is 2 x user capacity and the place is the ActiveRange: with PTS-C's ActiveRange
of 75 %, 2 x user capacity = 2.67 sequential passes over the ActiveRange (not 2 x the
ActiveRange = 1.5 x user capacity). With the ActiveRange at 100 % both are the same.

With several threads each writes its own slice of the ActiveRange (no thread rewrites the
whole range, which would multiply the bytes written by TC), its share of the bytes: whole
passes as fio `loops`, otherwise fio `io_size` larger than the slice (fio wraps around the
slice, still sequentially). fio's JSON must show exactly the planned bytes, else the
preconditioning did not happen as the spec requires.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pts.tools.fio import Fio, FioError, Job

# What the report and the dry-run say about the amount (the clause and the reading).
READING = ("the WIPC step of each test (PTS 2.0.2 §3.3: \"Write 2X User Capacity ... to the "
           "entire ActiveRange\") read as 2 x user capacity, written sequentially within the "
           "ActiveRange, not 2 x the ActiveRange")


class PreconditioningError(RuntimeError):
    pass


@dataclass(frozen=True)
class WipcPlan:
    jobs: tuple[Job, ...]
    bytes_expected: int
    tail_bytes: int          # end of the ActiveRange shorter than one block, not written
    capacity_bytes: int = 0  # user capacity the amount is a multiple of
    active_range_bytes: int = 0
    multiple: int = 2

    def amount_text(self, active_range_pct: int) -> str:
        """E.g. "2 x user capacity (2.67 passes over the 75 % ActiveRange)"."""
        passes = self.bytes_expected / (self.active_range_bytes - self.tail_bytes)
        return (f"{self.bytes_expected / self.capacity_bytes:.3g} x user capacity "
                f"({passes:.3g} passes over the {active_range_pct} % ActiveRange)")


def plan_wipc(active_range_bytes: int, block_size: int, multiple: int, threads: int,
              queue_depth: int, capacity_bytes: int | None = None) -> WipcPlan:
    """`multiple` x `capacity_bytes` (the user capacity; None: the ActiveRange is all of it)
    in whole blocks, over the ActiveRange's whole blocks, split by thread."""
    capacity = active_range_bytes if capacity_bytes is None else capacity_bytes
    blocks = active_range_bytes // block_size
    if blocks < threads:
        raise PreconditioningError(f"ActiveRange of {active_range_bytes} bytes is too small "
                                   f"for {threads} threads of {block_size}-byte writes")
    target = multiple * (capacity // block_size)       # blocks to write, all threads
    per, extra = divmod(blocks, threads)
    shares = [per + (1 if k < extra else 0) for k in range(threads)]
    io = [target * n // blocks for n in shares]        # each thread's share of the target
    for k in range(target - sum(io)):
        io[k] += 1
    jobs, offset = [], 0
    for k, (n, m) in enumerate(zip(shares, io, strict=True)):
        if m % n == 0:          # whole passes over the slice
            job = Job(f"wipc{k}", "write", block_size, queue_depth, offset=offset,
                      size=n * block_size, loops=m // n)
        else:
            job = Job(f"wipc{k}", "write", block_size, queue_depth, offset=offset,
                      size=n * block_size, io_size=m * block_size)
        jobs.append(job)
        offset += n * block_size
    return WipcPlan(tuple(jobs), target * block_size, active_range_bytes - blocks * block_size,
                    capacity, active_range_bytes, multiple)


def run_wipc(fio: Fio, device_path: str, plan: WipcPlan, out_dir: Path):
    result = fio.run(device_path, list(plan.jobs), out_dir, "wipc")
    written = result.summary.write.io_bytes
    if written != plan.bytes_expected:
        raise PreconditioningError(f"WIPC wrote {written} bytes, planned {plan.bytes_expected} "
                                   f"(fio output {result.json_path}): the drive was not "
                                   "preconditioned as PTS 2.0.2 §3.3 requires, so the test "
                                   "stops before its rounds. Look in fio's output for the error "
                                   "(a full or failing device, an I/O error) and re-run.")
    return result


__all__ = ["FioError", "PreconditioningError", "WipcPlan", "plan_wipc", "run_wipc"]
