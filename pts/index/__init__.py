"""The results index (issue 41 §1): every run folder under the given report folders as rows
of an SQL database (SQLite, one file beside the reports by default; PostgreSQL for a lab),
so that a lab's questions over many runs are one query. The folders stay the truth: the
index is derived from them by `python -m pts index` (pts.index.build) and can always be
rebuilt from them; nothing here writes into a run folder.

schema.py: the SQL schema as numbered migrations (one SQL text for SQLite and PostgreSQL);
db.py: an open index, the SQLite file (WAL), the migrations, a newer schema refused;
postgres.py: the PostgreSQL database (psycopg 3), its errors with the fix; target.py: where the
index is (--index FILE|URL, PTS_INDEX, REPORTS_DIR/index.sqlite) and opening it; scan.py: the
run folders under a report folder; rows.py: a stored run (pts.stored) as rows; build.py:
add, update, drop, one transaction per run folder; cli.py: `python -m pts index`.
"""
