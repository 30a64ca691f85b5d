"""`python -m pts export`: a run's results from its stored data, per cell as CSV (cli.py),
every table of the report as one JSON document (json_doc.py) or the run as OCP Test &
Validation line-delimited JSON (ocptv.py; both in docs/results-format.md).
Reads the stored run (pts.stored); compare and qualify read its cells too."""
