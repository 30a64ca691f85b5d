"""`python -m pts qualify RUN_DIR --datasheet` and the Qualification page, on constructed run
folders (tests/support/synthetic/runfactory.py): met, not met, and every way a requirement cannot be
judged."""

import pytest

from pts.cli.main import main
from pts.config.datasheet import parse
from pts.qualify.judge import ERROR, MET, NOT_MET, judge
from pts.results import records
from pts.results.ledger import Ledger
from pts.stored.data import load_run
from pts.stored.figures import datasheet_vocabulary
from tests.support.helpers import pdf_text
from tests.support.synthetic.runfactory import FALLING_CURVE, STEADY_CURVE, build_run

WINDOW_MEAN_4K_WRITE = 40000 * sum(STEADY_CURVE[2:7]) / 5     # 40,960


def req(text: str):
    (r,) = parse("[[require]]\n" + text, datasheet_vocabulary(), "ds.toml")
    return r


def test_met_and_not_met_say_measured_required_cell_test_window(tmp_path):
    run = load_run(build_run(tmp_path))
    met = judge(run, req('test="iops"\ncell="RND 4KiB 0/100"\nmetric="iops"\nat_least=40000'))
    assert met.verdict == MET and met.measured == pytest.approx(WINDOW_MEAN_4K_WRITE)
    assert met.text == ("measured 40,960, required >= 40,000 (RND 4KiB 0/100, iops, window "
                        "rounds 3..7)")
    unmet = judge(run, req('test="iops"\ncell="RND 4KiB 0/100"\nmetric="iops"\n'
                           'at_least=50000'))
    assert unmet.verdict == NOT_MET and "required >= 50,000" in unmet.text
    lat = judge(run, req('test="iops"\ncell="RND 4KiB 0/100"\nmetric="lat_mean_us"\n'
                         'at_most=10000'))
    assert lat.verdict == MET


@pytest.mark.parametrize("text, verdict, words", [
    ('test="wsat"\nmetric="ss_iops"\nat_least=1', ERROR, "test wsat did not run"),
    ('test="iops"\ncell="RND 8KiB 0/100"\nmetric="iops"\nat_least=1', ERROR,
     "no cell 'RND 8KiB 0/100' in iops"),
    ('test="iops"\ncell="RND 0.5KiB 0/100"\nmetric="iops"\nat_least=1', ERROR, "is N/A"),
    ('test="iops"\ncell="RND 4KiB 0/100"\nmetric="lat_percentile_us"\nat_most=1e9', ERROR,
     "did not record lat_percentile_us"),
    ('test="iops"\ncell="RND 4KiB 0/100"\nmetric="fob_ss_ratio"\nat_least=1', ERROR,
     "no FOB figure"),
])
def test_what_cannot_be_judged_is_never_passed(tmp_path, text, verdict, words):
    j = judge(load_run(build_run(tmp_path)), req(text))
    assert j.verdict == verdict and words in j.text and j.measured is None


def test_not_steady_run_is_not_met_whatever_the_figure(tmp_path):
    j = judge(load_run(build_run(tmp_path, curve=FALLING_CURVE)),
              req('test="iops"\ncell="RND 4KiB 0/100"\nmetric="iops"\nat_least=1'))
    assert j.verdict == NOT_MET and "did not reach steady state" in j.text


def test_unfinished_test_is_an_error(tmp_path):
    j = judge(load_run(build_run(tmp_path, finished=False)),
              req('test="iops"\ncell="RND 4KiB 0/100"\nmetric="iops"\nat_least=1'))
    assert j.verdict == ERROR and "did not finish" in j.text


def test_qualify_cli_exit_codes(tmp_path, capsys):
    folder = build_run(tmp_path)
    ds = tmp_path / "ds.toml"
    ds.write_text('[[require]]\ntest="iops"\ncell="RND 4KiB 0/100"\nmetric="iops"\n'
                  'at_least=40000\n')
    assert main(["qualify", str(folder), "--datasheet", str(ds)]) == 0
    assert "1 of 1 requirements met" in capsys.readouterr().out
    ds.write_text(ds.read_text() + '\n[[require]]\ntest="iops"\ncell="RND 4KiB 0/100"\n'
                  'metric="iops"\nat_least=1e6\n')
    assert main(["qualify", str(folder), "--datasheet", str(ds)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("MET ") and "NOT MET  iops RND 4KiB 0/100 iops >= 1e+06" in out
    assert f"[{ds} line 7]" in out
    ds.write_text('[[require]]\ntest="iops"\nmetric="iops"\nat_least=1\n')
    assert main(["qualify", str(folder), "--datasheet", str(ds)]) == 2
    assert "line 1" in capsys.readouterr().err
    assert main(["qualify", str(tmp_path / "none"), "--datasheet", str(ds)]) == 2


def test_qualification_page_from_requirement_records(tmp_path):
    folder = build_run(tmp_path)
    ledger = Ledger(folder / "ledger.jsonl")
    for required, value, verdict in ((40000, 40960.0, "met"), (50000, 40960.0, "not met")):
        ledger.append(records.Requirement(
            test="iops", cell="RND 4KiB 0/100", metric="iops", bound="at_least",
            required=required, value=value, verdict=verdict, text=f"measured {value}",
            source=f"ds.toml line {required // 10000}"))
    ledger.close()
    assert main(["report", str(folder)]) == 0
    text = pdf_text(folder / "report.pdf")
    assert "Qualification" in text and "1 of 2 datasheet requirements met" in text
    assert "NOT MET" in text and "ds.toml line 5" in text

