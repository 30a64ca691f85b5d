"""The spec's readings: where each spec value comes from, as the `[provenance.<section>]`
tables of a spec file declare it (the tables keep that name: it is the spec files' format).

No text of PTS-E 1.1 / PTS 2.0.x is available to this project (pts-digest §0, §13): the
values of the advanced tests are read from public implementations (S4 CloudHarmony
block-storage, S5 its fork, S7 an independent HIR script), fio's examples/jesd219.fio and
JESD219. Such a value is a *reading* of the specification, not a fact of it, and the report
must say so (issue 21 §2). One line per value, right below its section:

    [provenance.hir]
    idle_seconds = { status = "reading", source = "S4, S5, S7 agree (digest §13)" }
    wait_state_naming = { status = "reading", source = "S5, S7, S4's header",
                          alternatives = ["ordinal: WS1..WS5 (S4's plot legend)"] }
    block_size = { status = "confirmed", clause = "PTS-E 1.0 §..." }

Statuses: `confirmed` (needs `clause`), `reading` (needs `source`; `alternatives` are the
other readings, each "value: source"), `choice` (a value of this suite's own where the PTS
sets none, e.g. the purge probe: needs `source`, the reason). Every value of the sections in
REQUIRED (all keys but `clause`) must carry one; an entry for a key its section does not
have, an unknown status or an unknown field fails at load, naming file, table and key.
"""

from __future__ import annotations

from dataclasses import dataclass

CONFIRMED, READING, CHOICE = "confirmed", "reading", "choice"
STATUSES = (CONFIRMED, READING, CHOICE)

# Sections (or section keys) whose every value must say where it comes from: the advanced
# tests and the purge probe entirely (digest §7.5-§7.8, §13), and the single values the
# digest marks unconfirmed or recommended only (WSAT's 2.0.2 duration split, §7.4; the
# TC/QD recommendation, §4 item 6; Throughput's TC/QD, §7.2).
ALL = None
REQUIRED: dict[str, frozenset[str] | None] = {
    "hir": ALL, "xsr": ALL, "dirth": ALL, "cbw": ALL, "purge_probe": ALL,
    "wsat": frozenset({"max_hours"}),
    "common": frozenset({"thread_count", "queue_depth"}),
    "throughput": frozenset({"thread_count", "queue_depth"}),   # S5's TC 1 / QD 32 (§7.2)
    # RWSW (specs/rwsw-*.toml): its body text was not available, every value (rwsw-digest §0)
    "rwsw_capture": ALL, "rwsw_atw": ALL, "rwsw_fio": ALL, "rwsw_wsat": ALL,
    "rwsw_streams": ALL, "rwsw_replay": ALL, "rwsw_dirth": ALL,
}
EXEMPT = frozenset({"clause"})      # a label for the report, not a value

# The spec sections whose values each ledger test runs with (test name before any "-":
# "throughput-1024k" -> throughput, "dirth-precondition" -> dirth).
SECTIONS_OF_TEST = {
    "iops": ("steady_state", "common", "wipc", "iops", "purge_probe"),
    "throughput": ("steady_state", "throughput"),
    "latency": ("steady_state", "wipc", "latency"),
    "wsat": ("wsat", "purge_probe"),
    "hir": ("steady_state", "hir"),
    "xsr": ("xsr",),
    "dirth": ("steady_state", "dirth"),
    "cbw": ("steady_state", "cbw"),
    # RWSW tests: their readings come from the run's RWSW spec file (Spec.rwsw)
    "rwsw": ("steady_state", "rwsw_capture", "rwsw_atw"),
    "rwsw-wsat": ("steady_state", "rwsw_atw", "rwsw_fio", "rwsw_wsat"),
    "rwsw-streams": ("steady_state", "rwsw_atw", "rwsw_fio", "rwsw_streams"),
    "rwsw-replay": ("rwsw_atw", "rwsw_fio", "rwsw_replay"),
    "rwsw-replay-preconditioning": ("steady_state", "rwsw_atw", "rwsw_fio", "rwsw_replay"),
    # the operating points as PTS DIRTH chooses them: its ART ceiling, MidIOPS candidates
    # and response-time levels ([dirth]) are readings too
    "rwsw-dirth": ("steady_state", "rwsw_atw", "rwsw_fio", "rwsw_dirth", "dirth"),
    "rwsw-dirth-preconditioning": ("steady_state", "rwsw_atw", "rwsw_fio", "rwsw_dirth"),
}


@dataclass(frozen=True)
class Reading:
    """One spec value as this suite reads it: a fact of the spec (confirmed), a reading of
    it, or a choice of this suite; the report lists the readings and choices."""

    section: str
    key: str
    status: str                      # confirmed / reading / choice
    where: str                       # the clause (confirmed) or the source (reading, choice)
    value: object                    # the value as the spec file gives it (TOML -> JSON)
    alternatives: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.section}.{self.key}"

    def as_record(self) -> dict:
        """As a test_start `parameters.readings` item (docs/results-format.md)."""
        return {"key": self.name, "value": self.value, "status": self.status,
                "source": self.where, "alternatives": list(self.alternatives)}


def test_sections(test: str) -> tuple[str, ...]:
    """By the whole ledger test name (the RWSW tests: "rwsw-wsat"), else by its family."""
    return SECTIONS_OF_TEST.get(test) or SECTIONS_OF_TEST.get(test.split("-")[0], ())


def used_by(entries: tuple[Reading, ...], test: str) -> list[dict]:
    """The readings and choices a ledger test runs with, as records (confirmed ones are
    facts of the spec and not listed)."""
    sections = test_sections(test)
    return [p.as_record() for p in entries
            if p.section in sections and p.status != CONFIRMED]


def read(reader, data: dict) -> tuple[Reading, ...]:
    """The [provenance.*] tables of a parsed spec file, checked against its sections.
    `reader`: pts.config.spec._Reader (names file and key in every error)."""
    tables = data.get("provenance", {})
    if not isinstance(tables, dict):
        raise reader.fail("provenance", "must be a table of [provenance.<section>] tables")
    out = []
    for section, entries in tables.items():
        values = data.get(section)
        if not isinstance(values, dict) or section == "provenance":
            raise reader.fail(f"provenance.{section}", f"the spec file has no [{section}] "
                              "table: name a section of this file")
        if not isinstance(entries, dict):
            raise reader.fail(f"provenance.{section}", "must be a table: key = { status = "
                              '"reading", source = "..." }')
        for key, entry in entries.items():
            out.append(_entry(reader, section, key, entry, values))
    _check_required(reader, data, {(p.section, p.key) for p in out})
    return tuple(out)


def _entry(reader, section: str, key: str, entry, values: dict) -> Reading:
    where = f"provenance.{section}.{key}"
    if key not in values:
        raise reader.fail(where, f"[{section}] has no key {key!r}: remove this line or fix "
                                 f"the name (keys: {', '.join(sorted(values))})")
    if not isinstance(entry, dict):
        raise reader.fail(where, 'must be { status = "reading", source = "..." } or '
                                 '{ status = "confirmed", clause = "..." }')
    status = entry.get("status")
    if status not in STATUSES:
        raise reader.fail(where, f"unknown status {status!r}: use one of "
                                 f"{', '.join(STATUSES)}")
    field = "clause" if status == CONFIRMED else "source"
    allowed = {"status", field} | ({"alternatives"} if status != CONFIRMED else set())
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise reader.fail(where, f"unknown field {unknown[0]!r} for status {status!r} "
                                 f"(allowed: {', '.join(sorted(allowed))})")
    text = entry.get(field)
    if not isinstance(text, str) or not text.strip():
        raise reader.fail(where, f"status {status!r} needs {field} = \"...\" (where the value "
                                 "comes from)")
    alts = entry.get("alternatives", [])
    if not isinstance(alts, list) or not all(isinstance(a, str) and a for a in alts):
        raise reader.fail(where, 'alternatives must be a list of strings ("value: source")')
    return Reading(section, key, status, text, values[key], tuple(alts))


def _check_required(reader, data: dict, given: set[tuple[str, str]]) -> None:
    for section, keys in REQUIRED.items():
        values = data.get(section)
        if not isinstance(values, dict):
            continue
        for key in sorted(keys if keys is not ALL else set(values) - EXEMPT):
            if (section, key) not in given:
                raise reader.fail(
                    f"{section}.{key}", "has no provenance: the digest does not confirm this "
                    f"value, so say where it comes from: add under [provenance.{section}] "
                    f'the line {key} = {{ status = "reading", source = "..." }} (or status '
                    '"confirmed" with clause = "...")')
