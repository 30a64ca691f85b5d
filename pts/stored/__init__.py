"""The stored run: a run folder's stored data (run.json + ledger.jsonl) read into one model
that every reader of a stored run uses (report, export, compare, qualify, serve), and what is
computed from it alone — the verdict, the warnings (platform, purge probe, never-written
reads, report fields), the readings of the spec, the QoS levels — and how its numbers are
written. Renderer-free: nothing here imports reportlab or the pages."""
