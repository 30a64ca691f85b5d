"""The pytest session of snia-pts, not a command line: the plugin (`plugin.py`, loaded by the
root conftest.py: `pytest pts/ --device ...`), its options and the Settings made from them
(`options.py`), and the several-device session below.

Several devices in one session: `pytest pts/ --device A --device B ... --destructive`.

Mechanism: the suite's own scheduler, not pytest-xdist. The parent pytest session
(pts.session.parent) checks EVERY device first — resolution, capacity, the safety gate
(pts.device.safety.check_writable) and the per-device lock — and refuses the whole session,
naming every reason, before anything is written anywhere (unless --skip-refused-devices,
which leaves the refused devices out and says so). It then starts one child
`python -m pytest ARGS --device D` per device, in parallel, as subprocesses
(pts.session.children): each child IS today's single-device run (same options, its own
run folder, ledger, lock, report.pdf and verdict), so nothing of the single-device path is
duplicated or changed. The lock taken by the parent is handed to the child (inherited
descriptor, pts.device.lock), so no other process can take the device in between.

Why not pytest-xdist: it is not installed (a new dependency), its workers share one
collection and one session-scoped fixture world that the single-device run does not expect
(one Run per session, SIGTERM handling, the emulated SSD per session), and its scheduling
groups would still need the device checks done before any worker starts. Child processes
give per-device isolation for free: one device failing (purge error, device gone, a crash
of the child) cannot stop the others, and a Ctrl-C or SIGTERM of the parent is passed once
to every child, which then takes its own interrupted-run path (partial report, --resume).

What the parent shows: every PTS item once per device, its id naming the device
(test_iops[loop5], test_throughput[throughput-128k-loop5]); their outcomes are the
children's own test reports (serialized by pts.session.childlog, pytest's
pytest_report_to_serializable), so pass/fail/error/skip, junit XML and the exit status
mirror the children. Every line a child prints is prefixed with its device ([loop5]).
At the end the run folders are compared with the `python -m pts compare` code
(compare.pdf + compare.csv in --reports-dir/sessions/<UTC stamp>/, with session.json
naming every device, its run folder and exit status); its path is the last line printed.

The same session runs several `--resume RUN_DIR` (pts.session.resumed): a drive per run
folder, on the device its run.json names, each child `--resume RUN_DIR`.
"""
