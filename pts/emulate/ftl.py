"""A page-mapped flash translation layer (FTL) model: pure bookkeeping, no I/O, no clock.

The model answers one question per host command: how much NAND work (in microseconds of
die time) does this command cost? A write costs one page program per 4 KiB page touched,
plus whatever garbage collection (GC) it had to run first to get an erased block: every
valid page moved out of a victim block is a read and a program (write amplification),
and every reclaimed block is an erase. A read costs one page read per *mapped* page
(unmapped/trimmed pages are answered from the map, as real drives do). A trim costs nothing
and returns blocks without valid pages to the free pool, so a whole-device trim brings the
model back to the fresh-out-of-box (FOB) state. Turning microseconds into wall time is the
job of `throttle.Throttle`.

Layout: physical space is `blocks` erase blocks of `pages_per_block` pages. Host writes
go to an open block (the host write frontier); GC copies go to a separate open block
(the GC frontier), which keeps relocated (cold) data apart from new (hot) data. When the
host frontier needs a new block and only the GC reserve is left in the free pool, greedy
GC runs: the victim is the closed block with the fewest valid pages.

Maps are `array('i')` for fast scalar access on the hot path, with numpy views over the
same memory for the vectorised parts (victim search, GC scan, trim). A 1 GiB device with
20 % over-provisioning needs about 2.5 MB.
"""

from __future__ import annotations

import math
from array import array

import numpy as np

from pts.emulate.profiles import Profile

# Block states (stored in a bytearray).
FREE, OPEN, CLOSED = 0, 1, 2

# Free blocks kept back for the GC frontier: GC runs when the host would otherwise take the
# last one. One block is enough because a victim always has fewer valid pages than a block.
GC_RESERVE_BLOCKS = 1

# Spare (over-provisioned) blocks needed so that some closed block always has an invalid
# page: both frontiers, the reserve, and one block of slack.
MIN_SPARE_BLOCKS = 4


class FTL:
    """Greedy-GC page-mapped FTL over `capacity` bytes of user space (see module docstring)."""

    def __init__(self, capacity: int, profile: Profile) -> None:
        self.profile = profile
        self.page_size = ps = profile.page_size
        if capacity <= 0 or capacity % ps:
            raise ValueError(f"capacity {capacity} is not a positive multiple of {ps} bytes")
        self.capacity = capacity
        self.ppb = ppb = profile.pages_per_block
        self.user_pages = capacity // ps
        wanted = math.ceil(self.user_pages * (1 + profile.op_pct / 100) / ppb)
        self.blocks = max(wanted, math.ceil(self.user_pages / ppb) + MIN_SPARE_BLOCKS)
        self.physical_pages = self.blocks * ppb
        self.l2p = array("i", [-1]) * self.user_pages       # logical page -> physical page
        self.p2l = array("i", [-1]) * self.physical_pages   # physical page -> logical page
        self.valid = array("i", [0]) * self.blocks          # valid pages per block
        self.state = bytearray(self.blocks)                 # FREE / OPEN / CLOSED
        self._l2p_np = np.frombuffer(self.l2p, dtype=np.int32)
        self._p2l_np = np.frombuffer(self.p2l, dtype=np.int32)
        self._valid_np = np.frombuffer(self.valid, dtype=np.int32)
        self._state_np = np.frombuffer(self.state, dtype=np.uint8)
        self._program_us = profile.program_us
        self._relocate_us = profile.read_us + profile.program_us
        self._reset_counters()
        self._format()

    # ----------------------------------------------------------------- state handling

    def _reset_counters(self) -> None:
        self.host_writes = 0        # pages programmed for the host
        self.host_write_bytes = 0
        self.nand_writes = 0        # pages programmed in total (host + GC relocations)
        self.relocations = 0        # valid pages moved by GC
        self.gc_runs = 0            # victim blocks collected
        self.erases = 0
        self.reads = 0              # pages read by the host
        self.nand_reads = 0         # pages read from NAND (mapped host reads + relocations)
        self.trims = 0              # trim (discard) commands
        self.trimmed_pages = 0
        self.formats = 0            # returns to the FOB state (whole-device trims)
        self.ignored_trims = 0      # discards that left the mapping (trim_unmaps off)
        self.idle_gc_runs = 0       # victim blocks collected in host idle time

    def _format(self) -> None:
        """Erase everything: all blocks free, empty maps, fresh frontiers (the FOB state)."""
        self._l2p_np.fill(-1)
        self._p2l_np.fill(-1)
        self._valid_np.fill(0)
        self._state_np.fill(FREE)
        self.mapped = 0
        # Stack: pop() hands out the lowest block number first, which makes runs repeatable.
        self.free = list(range(self.blocks - 1, -1, -1))
        self.host_block, self.host_wp = -1, self.ppb   # "full" -> opened on first write
        self.gc_block, self.gc_wp = -1, self.ppb
        self._gc_debt_us = 0.0
        # pages still written at cache_program_us (the write cliff's fast region)
        self.cache_pages = int(self.profile.cliff_after_capacity * self.user_pages)

    def _take_free_block(self) -> int:
        block = self.free.pop()
        self.state[block] = OPEN
        return block

    def _close(self, block: int) -> None:
        if block >= 0:
            self.state[block] = CLOSED

    def _open_host_block(self) -> None:
        self._close(self.host_block)
        while len(self.free) <= GC_RESERVE_BLOCKS:
            self._collect_one()
        self.host_block, self.host_wp = self._take_free_block(), 0

    def _open_gc_block(self) -> None:
        self._close(self.gc_block)
        self.gc_block, self.gc_wp = self._take_free_block(), 0

    # ------------------------------------------------------------------- garbage collection

    def _pick_victim(self) -> int:
        """Greedy policy: the closed block with the fewest valid pages."""
        big = self.ppb + 1
        candidates = np.where(self._state_np == CLOSED, self._valid_np, big)
        victim = int(candidates.argmin())
        if candidates[victim] >= self.ppb:
            # Cannot happen with MIN_SPARE_BLOCKS spare blocks; guard against endless GC.
            raise RuntimeError("FTL garbage collection cannot make progress (no invalid page)")
        return victim

    def _collect_one(self) -> None:
        victim = self._pick_victim()
        base = victim * self.ppb
        window = self._p2l_np[base:base + self.ppb]
        moving = window[window >= 0].tolist()
        l2p, p2l, valid = self.l2p, self.p2l, self.valid
        for lpn in moving:
            if self.gc_wp == self.ppb:
                self._open_gc_block()
            ppn = self.gc_block * self.ppb + self.gc_wp
            self.gc_wp += 1
            l2p[lpn] = ppn
            p2l[ppn] = lpn
            valid[self.gc_block] += 1
        window.fill(-1)
        valid[victim] = 0
        self.state[victim] = FREE
        self.free.append(victim)
        moved = len(moving)
        self.relocations += moved
        self.nand_writes += moved
        self.nand_reads += moved
        self.gc_runs += 1
        self.erases += 1
        self._gc_debt_us += moved * self._relocate_us + self.profile.erase_us

    def collect_idle(self, max_victims: int) -> int:
        """Background GC in host idle time: collect up to `max_victims` greedy victims while
        the free pool is below what full compaction can give (every closed block that holds
        an invalid page is a candidate). Relocations and erases are counted, but cost no
        host-visible time: they happen while the host waits. Returns the victims taken."""
        taken = 0
        limit = self.ppb
        while taken < max_victims:
            candidates = np.where(self._state_np == CLOSED, self._valid_np, limit)
            victim = int(candidates.argmin())
            valid = int(candidates[victim])
            # Stop when no closed block has an invalid page, or when the GC frontier and the
            # free blocks could not take the victim's valid pages (as foreground GC, it may
            # use the reserve: the victim is freed right after).
            room = (self.ppb - self.gc_wp) + len(self.free) * self.ppb
            if valid >= limit or valid > room:
                break
            self._collect_one()
            taken += 1
        self.idle_gc_runs += taken
        return taken

    # ------------------------------------------------------------------------ host commands

    def _span(self, offset: int, length: int) -> tuple[int, int]:
        """Pages touched by [offset, offset+length): partial pages count (read-modify-write)."""
        if offset < 0 or length < 0 or offset + length > self.capacity:
            raise ValueError(f"I/O [{offset}, +{length}) outside the device (0..{self.capacity})")
        ps = self.page_size
        return offset // ps, -(-(offset + length) // ps)

    def write(self, offset: int, length: int) -> float:
        """Map the pages of a host write; return its NAND cost in microseconds."""
        first, end = self._span(offset, length)
        l2p, p2l, valid, ppb = self.l2p, self.p2l, self.valid, self.ppb
        self._gc_debt_us = 0.0
        for lpn in range(first, end):
            old = l2p[lpn]
            if old >= 0:
                p2l[old] = -1
                valid[old // ppb] -= 1
            else:
                self.mapped += 1
            if self.host_wp == ppb:
                self._open_host_block()       # may run GC, which adds to _gc_debt_us
            ppn = self.host_block * ppb + self.host_wp
            self.host_wp += 1
            l2p[lpn] = ppn
            p2l[ppn] = lpn
            valid[self.host_block] += 1
        pages = end - first
        self.host_writes += pages
        self.host_write_bytes += length
        self.nand_writes += pages
        fast = min(pages, self.cache_pages)
        self.cache_pages -= fast
        return (fast * self.profile.cache_program_us + (pages - fast) * self._program_us
                + self._gc_debt_us)

    def read(self, offset: int, length: int) -> float:
        """Count a host read; return its NAND cost (mapped pages only) in microseconds."""
        first, end = self._span(offset, length)
        if end - first == 1:
            mapped = 1 if self.l2p[first] >= 0 else 0
        else:
            mapped = int(np.count_nonzero(self._l2p_np[first:end] >= 0))
        self.reads += end - first
        self.nand_reads += mapped
        return mapped * self.profile.read_us

    def trim(self, offset: int, length: int) -> float:
        """Unmap the whole pages inside the range; free blocks left without valid data.

        Costs no host-visible time: real drives erase trimmed blocks in the background.
        """
        ps = self.page_size
        self._span(offset, length)                        # bounds check only
        first, end = -(-offset // ps), (offset + length) // ps
        self.trims += 1
        if not self.profile.trim_unmaps:
            self.ignored_trims += 1
            return 0.0
        if end <= first:
            return 0.0
        self.trimmed_pages += end - first
        seg = self._l2p_np[first:end]
        old = seg[seg >= 0]
        if old.size:
            self._p2l_np[old] = -1
            self._valid_np -= np.bincount(old // self.ppb, minlength=self.blocks).astype(np.int32)
            seg.fill(-1)
            self.mapped -= int(old.size)
        if self.mapped == 0:
            self._return_to_fob()
        else:
            self._reclaim_empty_blocks()
        return 0.0

    def _reclaim_empty_blocks(self) -> None:
        empty = np.flatnonzero((self._state_np == CLOSED) & (self._valid_np == 0))
        if empty.size:
            self._state_np[empty] = FREE
            self.free.extend(empty.tolist())
            self.erases += int(empty.size)

    def _return_to_fob(self) -> None:
        """Nothing is mapped any more: erase every written block and start afresh."""
        written = int(np.count_nonzero(self._state_np == CLOSED))
        written += sum(1 for block, wp in ((self.host_block, self.host_wp),
                                           (self.gc_block, self.gc_wp))
                       if block >= 0 and wp > 0)
        self.erases += written
        self.formats += 1
        self._format()

    # ------------------------------------------------------------------------- inspection

    @property
    def waf(self) -> float:
        """Write amplification factor since creation: NAND pages / host pages programmed."""
        return self.nand_writes / self.host_writes if self.host_writes else 0.0

    def stats(self) -> dict:
        return {
            "host_writes": self.host_writes, "host_write_bytes": self.host_write_bytes,
            "nand_writes": self.nand_writes, "relocations": self.relocations,
            "waf": round(self.waf, 4), "gc_runs": self.gc_runs, "erases": self.erases,
            "reads": self.reads, "nand_reads": self.nand_reads, "trims": self.trims,
            "trimmed_pages": self.trimmed_pages, "formats": self.formats,
            "idle_gc_runs": self.idle_gc_runs, "ignored_trims": self.ignored_trims,
            "cache_pages_left": self.cache_pages,
            "valid_pages": self.mapped, "free_blocks": len(self.free),
            "user_pages": self.user_pages, "physical_pages": self.physical_pages,
            "blocks": self.blocks, "pages_per_block": self.ppb, "page_size": self.page_size,
        }

    def check_invariants(self) -> None:
        """Raise AssertionError if the maps disagree (slow; for tests)."""
        l2p, p2l, valid = self._l2p_np, self._p2l_np, self._valid_np
        mapped = np.flatnonzero(l2p >= 0)
        assert mapped.size == self.mapped, "mapped counter"
        assert np.array_equal(p2l[l2p[mapped]], mapped), "l2p and p2l disagree"
        assert np.count_nonzero(p2l >= 0) == self.mapped, "stale p2l entries"
        per_block = (p2l.reshape(self.blocks, self.ppb) >= 0).sum(axis=1)
        assert np.array_equal(per_block, valid), "valid counts"
        free = np.flatnonzero(self._state_np == FREE)
        assert sorted(self.free) == free.tolist(), "free list vs block states"
        assert not valid[free].any(), "valid data in a free block"
