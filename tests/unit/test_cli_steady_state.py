"""`python -m pts steady-state`: the same maths from the command line."""

import json
import subprocess
import sys

import pytest


def cli(*args, stdin=""):
    return subprocess.run([sys.executable, "-m", "pts", "steady-state", *args], input=stdin,
                          capture_output=True, text=True)


def test_json_list_from_stdin_steady():
    p = cli(stdin="[50000, 48000, 47000, 46500, 46000]")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["steady"] is True and out["average"] == 47500
    assert (out["window_first"], out["window_last"]) == (1, 5)
    assert out["slope"] == pytest.approx(-950) and out["slope_excursion"] == pytest.approx(3800)
    assert out["max_data_excursion"] == pytest.approx(9500)
    assert out["max_slope_excursion"] == pytest.approx(4750)
    assert set(out) == {"steady", "window_first", "window_last", "average", "minimum",
                        "maximum", "data_excursion", "slope", "intercept", "slope_excursion",
                        "max_data_excursion", "max_slope_excursion"}


def test_whitespace_numbers_from_file_not_steady(tmp_path):
    f = tmp_path / "rounds.txt"
    f.write_text("90 95\n100 103 106 109\n112\n")
    p = cli(str(f))
    assert p.returncode == 1
    out = json.loads(p.stdout)
    assert out["steady"] is False and (out["window_first"], out["window_last"]) == (3, 7)


def test_limits_and_window_options():
    p = cli("--window", "3", "--max-data-excursion", "0.5", "--max-slope-excursion", "0.5",
            stdin="1 100 110 120")
    assert p.returncode == 0 and json.loads(p.stdout)["window_first"] == 2


@pytest.mark.parametrize("stdin,needle", [("1 2 3 4", "at least 5"),
                                          ("1 2 x 4 5", "not a number"),
                                          ("[1, 2, \"a\", 4, 5]", "numbers only"),
                                          ("", "at least 5")])
def test_bad_input_exit_2_with_message(stdin, needle):
    p = cli(stdin=stdin)
    assert p.returncode == 2 and needle in p.stderr and p.stdout == ""


def test_missing_file_exit_2():
    p = cli("/nonexistent/rounds.txt")
    assert p.returncode == 2 and "No such file" in p.stderr
