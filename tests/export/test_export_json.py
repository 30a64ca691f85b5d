"""`python -m pts export RUN_DIR --json` on synthetic run folders
(tests/support/synthetic/runfactory.py)."""

import json
import math

from pts.cli.main import main
from tests.support.synthetic.runfactory import BASE_IOPS, NA_BLOCK_SIZE, STEADY_CURVE, build_run


def export(folder, capsys) -> dict:
    assert main(["export", str(folder), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_holds_the_iops_table_of_the_window(tmp_path, capsys):
    doc = export(build_run(tmp_path), capsys)
    assert doc["schema"] == 2 and doc["device"]["serial"] == "SN-TEST-0042"
    # no deviation, a real device, steady: the one compliant verdict (pts/stored/verdict.py)
    # (synthetic test_start records carry no readings of the spec: none to count)
    assert doc["verdict"] == {"compliant": True, "text": "COMPLIANT RUN", "reasons": [],
                              "readings": 0}
    (iops,) = doc["tests"]
    assert iops["name"] == "iops" and iops["state"] == "steady"
    assert iops["window"] == [3, 7] and iops["steady_round"] == 7
    by_label = {c["label"]: c for c in iops["cells"]}
    assert len(by_label) == 9
    window_mean = sum(STEADY_CURVE[2:7]) / 5
    for (mix, bs), base in BASE_IOPS.items():
        cell = by_label[f"RND {bs / 1024:g}KiB {mix}"]
        assert cell["rounds"] == [3, 4, 5, 6, 7] and not cell["na"]
        assert math.isclose(cell["metrics"]["iops"], base * window_mean)
        assert math.isclose(cell["metrics"]["mbps"], base * window_mean * bs / 1e6)
        assert "lat_mean_us" in cell["metrics"] and "round" not in cell["metrics"]
    na = [c for c in iops["cells"] if c["block_size"] == NA_BLOCK_SIZE]
    assert len(na) == 3 and all(c["na"] and c["reason"] and c["metrics"] == {} for c in na)


def test_json_holds_steady_state_evidence_and_round_values(tmp_path, capsys):
    (iops,) = export(build_run(tmp_path), capsys)["tests"]
    ev = iops["steady_state"]["RND 4KiB 0/100"]
    assert ev["steady"] and ev["rounds"] == [3, 4, 5, 6, 7]
    assert math.isclose(ev["average"], 40000 * sum(STEADY_CURVE[2:7]) / 5)
    assert [r["round"] for r in iops["round_values"]] == list(range(1, 8))
    assert iops["round_values"][0]["tracking"]["RND 4KiB 0/100"] == 40000 * STEADY_CURVE[0]


def test_not_steady_run_says_so_and_writes_to_file(tmp_path, capsys):
    from tests.support.synthetic.runfactory import FALLING_CURVE
    out = tmp_path / "x.json"
    folder = build_run(tmp_path, curve=FALLING_CURVE)
    assert main(["export", str(folder), "--json", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    (iops,) = doc["tests"]
    assert iops["state"] == "not_steady" and not iops["steady_state"]["RND 4KiB 0/100"]["steady"]
    assert doc["verdict"] == {"compliant": False, "text": "NOT A COMPLIANT RUN", "reasons": [
        "IOPS: STEADY STATE NOT ACHIEVED after 7 rounds (window 3..7)"], "readings": 0}


def test_csv_and_json_exclusive_and_bad_folder_exit_2(tmp_path, capsys):
    import pytest
    with pytest.raises(SystemExit) as exc:
        main(["export", str(tmp_path), "--csv", "--json"])
    assert exc.value.code == 2
    assert main(["export", str(tmp_path / "nope"), "--json"]) == 2
    assert "does not exist" in capsys.readouterr().err
