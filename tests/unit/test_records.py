"""The ledger schema: typed constructors, a round trip through ledger.jsonl, and tolerant
reading (unknown types, fields missing from older ledgers, fields from newer writers, a torn
last line)."""

from __future__ import annotations

import pytest

from pts.results import records
from pts.results.ledger import Ledger, read_records


def test_a_misspelt_field_fails_where_it_is_written():
    with pytest.raises(TypeError):
        records.Deviation(test="iops", txt="typo")


def test_round_trip_and_tolerant_reading(tmp_path):
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(path)
    point = records.Point(test="iops", round=1, index=0, rw_mix="0/100", read_pct=0,
                          block_size=4096, na=False, measured={"iops": 1234.5, "raw": "x"})
    written = ledger.append(point)
    ledger.close()
    with path.open("a") as fh:
        fh.write('{"type": "test_end", "test": "iops", "status": "steady", "new_field": 1}\n')
        fh.write('{"type": "from_a_newer_writer", "test": "iops", "x": 1}\n')
        fh.write('{"type": "deviation", "te')            # torn last line
    found, notes = read_records(path)
    assert found[0] == written and found[0].get("iops") == 1234.5 and written.time
    assert found[0].to_json()["iops"] == 1234.5 and "measured" not in found[0].to_json()
    end = found[1]
    assert isinstance(end, records.TestEnd) and end.finished and end.rounds is None
    assert end.extra == {"new_field": 1}
    assert isinstance(found[2], records.Unknown) and found[2].type == "from_a_newer_writer"
    assert len(found) == 3 and "torn last record" in notes[0]



def test_the_power_windows_write_their_key_first():
    """point_power, round_power and phase_power take their window's fields from one base
    (PowerWindow) and still write them after their key, as the ledger always has."""
    window = ["source", "start", "end", "energy_j", "covered_s", "mean_w", "samples", "gaps",
              "max_w", "state_counts"]
    for cls, key in ((records.PointPower, ["round", "index"]), (records.RoundPower, ["round"]),
                     (records.PhasePower, ["phase", "number"])):
        record = cls(test="iops", time=1.0, **dict.fromkeys(key + window, 0))
        assert list(record.to_json()) == ["type", "time", "test", *key, *window], cls.TYPE

@pytest.mark.parametrize("status, finished", [
    ("steady", True), ("not_steady", True), ("complete", True),
    ("device_health_failure", True), ("error", False), ("interrupted", False)])
def test_which_ends_are_finished(status, finished):
    end = records.TestEnd(test="t", status=status, rounds=None, steady_round=None,
                          window=None, message="")
    assert end.finished is finished


FULL_DISK = """
import resource, signal, sys
from pts.results import records
from pts.results.ledger import Ledger, LedgerWriteError
ledger = Ledger(sys.argv[1])
ledger.append(records.Deviation(test="iops", text="first"))
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)     # past the limit: EFBIG, as a full disk
size = ledger.path.stat().st_size
resource.setrlimit(resource.RLIMIT_FSIZE, (size + 20, resource.RLIM_INFINITY))
try:
    ledger.append(records.Deviation(test="iops", text="x" * 200))
except LedgerWriteError as exc:
    print(exc)
resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
ledger.append(records.Deviation(test="iops", text="after"))
ledger.close()
"""


def test_a_record_that_does_not_fit_leaves_no_fragment(tmp_path):
    """A full disk mid-record (the file size limit stands in for it: the kernel writes what
    fits, then fails): the error says which record and what to do; the part written is
    taken back, so a later record follows a whole line and the ledger reads clean."""
    import subprocess
    import sys
    path = tmp_path / "ledger.jsonl"
    p = subprocess.run([sys.executable, "-c", FULL_DISK, str(path)], capture_output=True,
                       text=True, check=True)
    assert f"cannot append a deviation record to {path}: File too large (the ledger holds " \
           "every record before it; free space, then --resume the run)" in p.stdout
    found, notes = read_records(path)
    assert [r.text for r in found] == ["first", "after"] and notes == []
