"""Convergence pages beyond the tracking variables (pts-digest §8.3):

  IOPS: the steady-state convergence of RND 0/100 (and of 100/0) IOPS for ALL block sizes
  of the run, one line per block size (the tracking variables are only two of them);
  Throughput: SEQ read and SEQ write MB/s each on its own plot, as the spec draws them.
"""

from __future__ import annotations

from reportlab.platypus import Flowable

from pts.report.pages.steady import convergence_page
from pts.stored.model import TestResult

# (R/W mix, how the page names it), in the order of the pages
IOPS_MIXES = (("0/100", "RND 0/100 (write) IOPS, all block sizes"),
              ("100/0", "RND 100/0 (read) IOPS, all block sizes"))


def iops_all_sizes(test: TestResult, ylabel: str) -> list[Flowable]:
    """One page per R/W mix of IOPS_MIXES the test ran: that mix's IOPS per round for every
    block size (N/A cells have no line)."""
    story: list[Flowable] = []
    for mix, name in IOPS_MIXES:
        if mix not in test.rw_mixes:
            continue
        cells = [(mix, bs) for bs in test.block_sizes
                 if any(p.rw_mix == mix and p.block_size == bs and not p.na
                        for p in test.points)]
        if cells:
            story += convergence_page(test, ylabel, "iops", cells, name, first=False)
    return story


def throughput_split(test: TestResult, ylabel: str) -> list[Flowable]:
    """The test's first page: SEQ read MB/s and SEQ write MB/s convergence on separate
    pages when it ran both; else the one it ran (one page, as before)."""
    directions = [(mix, name) for mix, name in (("100/0", "SEQ read MB/s"),
                                                ("0/100", "SEQ write MB/s"))
                  if mix in test.rw_mixes]
    others = [m for m in test.rw_mixes if m not in ("100/0", "0/100")]
    if len(directions) < 2 or others:
        cells = [(mix, bs) for mix in test.rw_mixes for bs in test.block_sizes]
        return convergence_page(test, ylabel, "mbps", cells, "SEQ read and write MB/s")
    story: list[Flowable] = []
    for n, (mix, name) in enumerate(directions):
        # A SEQ 100/0 or 0/100 point's MB/s is its read or its write MB/s.
        story += convergence_page(test, ylabel, "mbps", [(mix, bs) for bs in test.block_sizes],
                                  name, first=n == 0)
    return story
