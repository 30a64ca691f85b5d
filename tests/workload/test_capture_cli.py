"""`python -m pts capture` arguments refused before anything is traced or written."""

from __future__ import annotations

import pytest

from pts.cli import main


@pytest.mark.parametrize("argv, says", [
    (["ssh://root@dut1/tmp/x", "--seconds", "1"], "a remote device is ssh://"),
    (["/dev/null"], "--seconds N (> 0) is required"),
    (["/dev/null", "--seconds", "1", "--buffer-kb", "8"], "at least 64"),
    (["/dev/null", "--seconds", "1", "--step", "0"], "--step 0.0: give a step length > 0"),
    (["--import", "x.iolog", "/dev/null"], "either DEVICE or --import FILE"),
    ([], "give the DEVICE to capture"),
])
def test_bad_arguments_exit_2_name_the_fix_and_write_nothing(tmp_path, capsys, argv, says):
    out = tmp_path / "cap.parquet"
    assert main.main(["capture", *argv, "-o", str(out)]) == 2
    assert says in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_output_directory_must_exist(tmp_path, capsys):
    out = tmp_path / "missing" / "cap.parquet"
    assert main.main(["capture", "--import", "x", "-o", str(out)]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_help_says_read_only_and_what_it_needs(capsys):
    with pytest.raises(SystemExit):
        main.main(["capture", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for words in ("READ-ONLY", "never opened for writing", "no --destructive",
                  "mounted device in use is allowed", "Needs root; tracefs is mounted at "
                  "/sys/kernel/tracing when it is not (said on stdout)"):
        assert words in text, words
