"""The index's SQL schema as numbered migrations, applied in order, each once (db.migrate).

Migration N is the SQL that takes a schema at version N-1 to version N; a released migration
is never edited, a change is a new one. The SQL is kept to what SQLite and PostgreSQL both
take: TEXT, INTEGER, BIGINT, DOUBLE PRECISION, BOOLEAN; natural keys (a run is its folder's
absolute path), no AUTOINCREMENT / SERIAL; foreign keys ON DELETE CASCADE (SQLite needs
PRAGMA foreign_keys = ON per connection: db.connect sets it); times are Unix seconds as
DOUBLE PRECISION beside run.json's own text.

Tables (docs/index.md):
- schema_version: one row per applied migration;
- runs: one row per run folder (device identity, host, spec, options and deviations, the
  verdict, the state, times, why its ledger could not be read if so, and the file stats the
  folder was read at; from migration 2 the OCP requirement verdicts' counts);
- tests: one row per test of a run (state, status, steady or not, rounds, window, times);
- figures: the headline figures per test and cell, as the report shows them (pts.index.rows);
- release_gates (migration 3): per report folder, model and margins, the release gate's answer
  for the model's two newest firmwares (pts.index.gate_store): derived from the rows above
  each time they change, so rebuilt with them from the folders.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Migration:
    version: int
    title: str
    statements: tuple[str, ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "runs, tests and their headline figures", (
        """CREATE TABLE runs (
            folder TEXT PRIMARY KEY,
            root TEXT NOT NULL,
            run_id TEXT NOT NULL,
            model TEXT NOT NULL,
            serial TEXT NOT NULL,
            firmware TEXT NOT NULL,
            capacity_bytes BIGINT,
            transport TEXT NOT NULL,
            emulated BOOLEAN,
            host TEXT,
            spec_name TEXT,
            spec_title TEXT,
            options_json TEXT NOT NULL,
            deviations_json TEXT NOT NULL,
            deviation_count INTEGER NOT NULL,
            compliant BOOLEAN,
            verdict TEXT,
            state TEXT NOT NULL,
            started TEXT,
            started_at DOUBLE PRECISION,
            last_record_at DOUBLE PRECISION,
            ended_at DOUBLE PRECISION,
            test_count INTEGER NOT NULL,
            error TEXT,
            notes_json TEXT NOT NULL,
            run_json_size BIGINT,
            run_json_mtime_ns BIGINT,
            ledger_size BIGINT,
            ledger_mtime_ns BIGINT,
            reader INTEGER NOT NULL,
            indexed_at DOUBLE PRECISION NOT NULL
        )""",
        "CREATE INDEX runs_by_model ON runs (model, firmware, serial)",
        "CREATE INDEX runs_by_serial ON runs (serial)",
        "CREATE INDEX runs_by_host ON runs (host)",
        "CREATE INDEX runs_by_started ON runs (started_at)",
        """CREATE TABLE tests (
            folder TEXT NOT NULL REFERENCES runs (folder) ON DELETE CASCADE,
            name TEXT NOT NULL,
            position INTEGER NOT NULL,
            title TEXT NOT NULL,
            clause TEXT,
            state TEXT NOT NULL,
            status TEXT NOT NULL,
            steady BOOLEAN,
            rounds INTEGER NOT NULL,
            steady_round INTEGER,
            window_first INTEGER,
            window_last INTEGER,
            started_at DOUBLE PRECISION,
            ended_at DOUBLE PRECISION,
            PRIMARY KEY (folder, name)
        )""",
        "CREATE INDEX tests_by_name ON tests (name, state)",
        """CREATE TABLE figures (
            folder TEXT NOT NULL,
            test TEXT NOT NULL,
            metric TEXT NOT NULL,
            cell TEXT NOT NULL,
            position INTEGER NOT NULL,
            rw_mix TEXT,
            block_size INTEGER,
            value DOUBLE PRECISION,
            shown TEXT NOT NULL,
            unit TEXT NOT NULL,
            rounds INTEGER,
            host_bound BOOLEAN NOT NULL,
            reason TEXT,
            PRIMARY KEY (folder, test, metric, cell),
            FOREIGN KEY (folder, test) REFERENCES tests (folder, name) ON DELETE CASCADE
        )""",
        "CREATE INDEX figures_by_cell ON figures (test, metric, cell)",
    )),
    # issue 49 §4: the OCP requirement verdicts' counts of the newest text per run (NULL: not
    # a run on an NVMe drive), so `pts history` shows them over firmware versions
    Migration(2, "OCP requirement counts per run", tuple(
        f"ALTER TABLE runs ADD COLUMN {column}" for column in (
            "ocp_version TEXT", "ocp_pass INTEGER", "ocp_fail INTEGER",
            "ocp_not_applicable INTEGER", "ocp_not_checked INTEGER"))),
    # issue 50 §4: the release gate's answer kept with the runs it was drawn from, so that
    # /metrics and the history page read it (pts.index.gate_store) instead of working it out
    # at each request; answer_json is pts.index.history_gate.PairGate.as_data()
    Migration(3, "the release gate's answer per model", (
        """CREATE TABLE release_gates (
            root TEXT NOT NULL,
            model TEXT NOT NULL,
            margins TEXT NOT NULL,
            firmware_a TEXT NOT NULL,
            firmware_b TEXT NOT NULL,
            level DOUBLE PRECISION NOT NULL,
            status INTEGER NOT NULL,
            answer TEXT NOT NULL,
            summary TEXT NOT NULL,
            answer_json TEXT,
            computed_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (root, model, margins)
        )""",)),
)

VERSION = MIGRATIONS[-1].version      # the schema this code writes and reads

# Before any migration: the table that says which ones were applied.
VERSION_TABLE = """CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    applied_at DOUBLE PRECISION NOT NULL
)"""
