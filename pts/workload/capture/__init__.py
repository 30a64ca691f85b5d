"""The capture (RWSW; docs/capture.md): a drive's block I/O recorded while it serves its real
workload, read-only, from the kernel's block tracepoints, into the capture file.

    source.py     what a live capture source does (Source: a typing.Protocol, the table of
                  operations each source fills, as fio's ioengines.h for its engines)
    tracefs.py    the live source on this host: a tracefs instance of our own; it also
                  travels alone (stdlib only, imports nothing of the project) to a DUT host
                  as the body of remote.py's agent
    remote.py     the live source on another host (ssh://): that agent, driven over ssh
    local.py      this host's side of tracefs, never sent: mounted when it is not, dev_t
    loop.py       the capture loop: the source's ring buffer pages -> the spool
    spool.py      the spool: the pages in fsync'd parts (a killed capture keeps them)
    unspool.py    the spool decoded into the capture file, after tracing
    ringbuf.py    the ring buffer's binary pages and events decoded
    pairing.py    issue and complete events paired into one row per I/O
    writeback.py  buffered writeback attributed to the task that dirtied its pages
    events.py     the capture file: one typed column schema, Parquet
    imports.py    captures made elsewhere (blkparse text, fio iologs) into a capture file
    record.py     `python -m pts capture` assembled (pts/cli/capture.py parses and prints)

Characterisation and the Applied Test Workload (pts/workload/characterise.py, atw.py) read
the capture file only.
"""
