"""What the tests share and is not a test: paths, loop devices and the recorded-output fake
of external tools (helpers), the suite run as a user runs it (ptsrun, campaign), synthetic
run folders (synthetic/, and the dashboard's serve_runs), a stand-in run for the device
counters (fake_run), the results-format document's parser (records_doc), the expected
header blocks (headers), page and screen snapshots (snapshots, screens, pages), remote DUT
hosts (remote_hosts) and the QEMU guest (guest, qemu_guest). A test module imports from
here, never from another test module (tests/unit/test_architecture.py)."""
