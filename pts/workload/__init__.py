"""Real-world workloads (SNIA RWSW; reference: shared/reference/rwsw-digest.md).

    capture (read-only: the kernel's block tracepoints, one row per I/O, never any data)
      -> events.py      the capture file: one typed column schema, Parquet, bounded memory
      -> characterise   IO streams (RND|SEQ, R|W, transfer size), steps, OIO, footprint
      -> atw.py         the Applied Test Workload: the file the RWSW tests take (--workload)

Every RWSW value is a reading (the spec's body text was not available): its default lives in
specs/rwsw-*.toml with its provenance, never only here.
"""
