"""Real-world workloads (SNIA RWSW; reference: shared/reference/rwsw-digest.md).

    capture/        (read-only: the kernel's block tracepoints, one row per I/O, never any
                    data) -> the capture file (capture/events.py: one typed column schema,
                    Parquet, bounded memory); a room of its own: pts/workload/capture/
      -> characterise   IO streams (RND|SEQ, R|W, transfer size), steps, OIO, footprint
      -> atw.py         the Applied Test Workload: the file the RWSW tests take (--workload)
    applied.py      an ATW as fio job sections (the RWSW tests, pts/testdefs/rwsw/)

Every RWSW value is a reading (the spec's body text was not available): its default lives in
specs/rwsw-*.toml with its provenance, never only here.
"""
