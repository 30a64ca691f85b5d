"""The release gate's answer kept in the results index (issue 50 §4; table release_gates,
migration 3): per report folder (root), model and margins (pts.config.margins.Margins.key),
the answer of pts.index.history_gate for the model's two newest firmwares (A the older: the
pair the history page opens on and /metrics alerts on), at the gate's level
(release_gate.LEVEL). /metrics and the history page read it here instead of working it out
at every request.

The index stays a view of the run folders: the answers are worked out from the index's own
rows (the runs and figures read from the folders), again for a model each time one of its
run folders is added, read again or dropped (pts.index.build calls refresh), in the same
transaction as nothing else, so a rebuilt index has them again. A model whose pair cannot be
judged (no figure on both sides) keeps a row with status 2 and the reason, as the command
would exit. Nothing here depends on the backend: the same SQL for SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pts.config import margins as margins_mod
from pts.index import query
from pts.index.db import transaction

if TYPE_CHECKING:
    from pts.index import history_gate
# history, history_gate and release_gate load scipy: imported where an answer is worked out or
# read, not here, because a run's process imports this module through its live index
# (pts.index.live -> build) and loads no scipy until it renders (tests/unit/test_lazy_imports)

COLUMNS = ("root", "model", "margins", "firmware_a", "firmware_b", "level", "status",
           "answer", "summary", "answer_json", "computed_at")
NO_ANSWER = "no answer"
defaults = margins_mod.defaults


@dataclass(frozen=True)
class StoredGate:
    """One model's kept answer; `gate` None when there was none (status 2: `summary` says
    why)."""

    model: str
    a: str
    b: str
    margins: str
    level: float
    status: int
    answer: str
    summary: str
    gate: history_gate.PairGate | None
    computed_at: float


def answer_of(conn, root: str, model: str, margins: margins_mod.Margins) -> dict | None:
    """The row to keep for `model` under `root`: None when it has fewer than two firmwares."""
    from pts.index import history, history_gate, release_gate
    pair = history.firmwares(conn, model, root)[-2:]
    if len(pair) < 2:
        return None
    row = {"root": root, "model": model, "margins": margins.key, "firmware_a": pair[0],
           "firmware_b": pair[1], "level": release_gate.LEVEL, "computed_at": time.time()}
    try:
        h = history.history(conn, model, pair, root=root, changes=False)   # gate only
        p = history_gate.pair_gate(h, margins)
    except (history.HistoryError, release_gate.GateInputError) as exc:
        return row | {"status": release_gate.EXIT_BAD_INPUT, "answer": NO_ANSWER,
                      "summary": str(exc), "answer_json": None}
    return row | {"status": p.status, "answer": p.answer.answer, "summary": p.answer.summary,
                  "answer_json": json.dumps(p.as_data())}


def refresh(conn, root: str, margins: margins_mod.Margins | None = None,
            models: Iterable[str] | None = None) -> int:
    """Work out again the kept answers of `models` (None: every model) under `root` with
    `margins` (None: the built-in ones), in one transaction; the number of rows kept."""
    margins = margins or margins_mod.defaults()
    names = sorted(set(models)) if models is not None \
        else [m for m, _ in query.models(conn, root)]
    found = [row for row in (answer_of(conn, root, m, margins) for m in names) if row]
    with transaction(conn):
        for model in names:
            conn.execute("DELETE FROM release_gates WHERE root = ? AND model = ? AND "
                         "margins = ?", (root, model, margins.key))
        if found:
            conn.executemany(f"INSERT INTO release_gates ({', '.join(COLUMNS)}) VALUES "
                             f"({', '.join('?' * len(COLUMNS))})",
                             [tuple(r[c] for c in COLUMNS) for r in found])
    return len(found)


def has_any(conn, root: str, margins: margins_mod.Margins) -> bool:
    """Whether answers with these margins were worked out under `root` at all."""
    return conn.execute("SELECT COUNT(*) FROM release_gates WHERE root = ? AND margins = ?",
                        (root, margins.key)).fetchone()[0] > 0


def stored(conn, root: str, margins: margins_mod.Margins | None = None,
           model: str | None = None) -> list[StoredGate]:
    """The kept answers under `root` with `margins` (of `model` only, if given), by model."""
    from pts.index import history_gate
    margins = margins or margins_mod.defaults()
    sql = f"SELECT {', '.join(COLUMNS)} FROM release_gates WHERE root = ? AND margins = ?"
    params: list = [root, margins.key]
    if model is not None:
        sql, params = sql + " AND model = ?", params + [model]
    out = []
    for values in conn.execute(sql + " ORDER BY model", params).fetchall():
        r = dict(zip(COLUMNS, values, strict=True))
        gate = None if r["answer_json"] is None \
            else history_gate.from_data(json.loads(r["answer_json"]))
        out.append(StoredGate(r["model"], r["firmware_a"], r["firmware_b"], r["margins"],
                              float(r["level"]), int(r["status"]), r["answer"], r["summary"],
                              gate, float(r["computed_at"])))
    return out
