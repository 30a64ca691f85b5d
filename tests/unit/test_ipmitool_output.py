"""pts.tools.ipmitool's parsing of `ipmitool dcmi power reading` and `sensor reading`, on
constructed output (tests/data/recorded/README.md says from what): a BMC with DCMI is not
something the tests can run (ipmi_sim has none; tests/power/test_bmc.py runs the rest)."""

from __future__ import annotations

import pytest

from pts.tools.ipmitool import Bmc, parse_dcmi_power, parse_sensor_reading
from tests.support.helpers import REPO

RECORDED = REPO / "tests" / "data" / "recorded"


def test_the_instantaneous_reading_not_the_average_nor_the_extremes():
    text = (RECORDED / "ipmitool-dcmi-power-reading_constructed.txt").read_text()
    assert parse_dcmi_power(text) == 187.0


def test_a_deactivated_power_measurement_is_no_reading():
    text = (RECORDED / "ipmitool-dcmi-power-reading_deactivated_constructed.txt").read_text()
    with pytest.raises(ValueError, match="power measurement is deactivated"):
        parse_dcmi_power(text)


def test_no_reading_at_all():
    with pytest.raises(ValueError, match="no 'Instantaneous power reading'"):
        parse_dcmi_power("Error: Unable to establish IPMI v2 / RMCP+ session\n")


def test_sensor_reading_by_its_name():
    # ipmitool 1.8.19 lib/ipmi_sensor.c: "%-16s | %s" (name, then the converted value)
    text = "CPU Power        | 41\nPower In         | 220\n"
    assert parse_sensor_reading(text, "Power In") == 220.0
    with pytest.raises(ValueError, match="has no reading"):
        parse_sensor_reading("Power In         | na\n", "Power In")
    with pytest.raises(ValueError, match="not in ipmitool's output"):
        parse_sensor_reading(text, "PSU1 Power")


def test_the_password_never_on_the_command_line():
    argv = Bmc("10.0.0.5", 623, "admin", "/root/bmc.pw", cipher=17).argv("dcmi", "power",
                                                                         "reading")
    assert argv[:7] == ["ipmitool", "-I", "lanplus", "-H", "10.0.0.5", "-p", "623"]
    assert "-P" not in argv and argv[argv.index("-f") + 1] == "/root/bmc.pw"
    assert argv[argv.index("-C") + 1] == "17" and argv[-3:] == ["dcmi", "power", "reading"]
