"""Synthetic run folders (run.json + ledger.jsonl, raw/ where a page reads it), written
without a device, on one writer (runfactory.RunFolder: the clock from T0, run.json as a run
writes it, dict or pts.results.records records) and one steady-state evidence per round
(runfactory.round_evidence):

    runfactory, runfactory_extra   small hand-made tests (IOPS 3 x 3 with an N/A row,
                                   Latency with fio json+ files, Throughput), each record
                                   spelled out so a test can change or break one
    synthrun, synthrun_more        every PTS test written with the project's own pieces
                                   (pts.testdefs parameters, points, records) in a Shape:
                                   FULL (benchmarks) or REFERENCE (tests/data/reference-run)
"""
