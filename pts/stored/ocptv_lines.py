"""The OCP Test & Validation (OCPTV) output lines as both OCPTV writers of the suite write
them: a run's export (pts.export.ocptv) and the release gate's answer (pts.index.gate_ocptv).
Here, below both, because the export and the index stand side by side on the read model and
import none of each other (docs/design.md, "Layout"): one writer, not two.

OCPTV output specification 2.0 (opencomputeproject/ocp-diag-core json_spec/; the schema is
kept in tests/data/ocptv-schema/, and the tests validate every line against it).
"""

from __future__ import annotations

from datetime import UTC, datetime

# OCPTV output specification 2.0 (ocp-diag-core json_spec/README.md "Version 2.0"; root.json
# holds major 2, minor 0 as constants).
SCHEMA_VERSION = {"major": 2, "minor": 0}


def iso(ts: float) -> str:
    """A Unix time as OCPTV writes it (RFC 3339, UTC, "Z": as the ocptv package formats)."""
    return datetime.fromtimestamp(ts, UTC).isoformat().replace("+00:00", "Z")


def log(severity: str, message: str) -> dict:
    return {"severity": severity, "message": message}


class Lines:
    """The output lines in order: sequence numbers from 0, each line stamped with a stored
    time (the previous line's where the record has none)."""

    def __init__(self, first: float | None):
        self.out: list[dict] = []
        self.time = first if first is not None else 0.0

    def add(self, body: dict, when: float | None = None) -> None:
        if when is not None:
            self.time = when
        self.out.append({"sequenceNumber": len(self.out), "timestamp": iso(self.time)} | body)

    def run(self, kind: str, body: dict, when: float | None = None) -> None:
        self.add({"testRunArtifact": {kind: body}}, when)

    def step(self, step_id: str, kind: str, body: dict, when: float | None = None) -> None:
        self.add({"testStepArtifact": {"testStepId": step_id, kind: body}}, when)
