"""docs/results-format.md is checked against the ledger schema (pts/results/records.py) and
the measured fields the tests write (pts/testdefs/fields.py): a field documented but never
written, or written but undocumented, fails here."""

from __future__ import annotations

import re

import pytest

from pts.results import records
from pts.testdefs import fields
from pts.tools.fio import parse_output, summarize
from tests.support.records_doc import DOC, RECORDED, TIMING, top_level_names


def documented_types() -> dict[str, set[str]]:
    """type -> fields, from the main rows of the ledger records table."""
    found = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| `([a-z_]+)` \| (.*) \|$", line)
        if m:
            found[m.group(1)] = top_level_names(m.group(2))
    return found


def documented_measured() -> dict[str, set[str]]:
    """test -> measured fields, from the measured-fields table ("the IOPS fields" expands)."""
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| (IOPS|Throughput|Latency) \| (.*) \|$", line)
        if m:
            rows[m.group(1)] = (m.group(2), top_level_names(m.group(2)))
    base = rows["IOPS"][1]
    return {name: names | (base if "the IOPS fields" in text else set())
            for name, (text, names) in rows.items()}


def test_the_doc_parser_reads_what_it_should():
    assert top_level_names("`a`, `b` {`c`, `d`}, `e` (`f` or \"x\")") == {"a", "b", "e"}


def test_every_record_type_is_documented_with_exactly_its_fields():
    doc = documented_types()
    assert set(doc) == set(records.TYPES), "record types documented vs declared"
    for name, cls in records.TYPES.items():
        written = set(cls.fixed_fields())
        assert doc[name] == written, (
            f"{name}: documented but not written: {sorted(doc[name] - written)}; written but "
            f"not documented: {sorted(written - doc[name])}")


@pytest.mark.parametrize("test, measure", [
    ("IOPS", fields.basic), ("Throughput", fields.throughput),
    ("Latency", lambda s: fields.latency(s, 99.999))])
def test_measured_fields_of_each_test_are_documented(test, measure):
    written = set(measure(summarize(parse_output(RECORDED.read_text())))) | TIMING
    documented = documented_measured()[test]
    assert documented == written, (
        f"{test}: documented but not written: {sorted(documented - written)}; written but "
        f"not documented: {sorted(written - documented)}")
