"""`--power SOURCE[,SOURCE...]` (pts.power.spec): parsing, errors that name the bad part and
the fix, building, and the check that a source answers."""

from __future__ import annotations

import sys

import pytest

from pts.power.bmc import IpmiSource, RedfishSource
from pts.power.host import MeterSource, RaplSource
from pts.power.spec import PowerSpecError, SourceSpec, build, check, parse


def test_sources_and_their_parameters_in_order():
    specs = parse("emulated,ipmi:10.0.0.5:6230,user=admin,password-file=/root/bmc.pw,"
                  "rapl:1,interval=2,redfish:https://bmc/redfish/v1/Chassis/1,insecure=yes,"
                  "meter:quarch-cli --stream,measures=drive 12 V,drive")
    assert [(s.kind, s.arg) for s in specs] == [
        ("emulated", ""), ("ipmi", "10.0.0.5:6230"), ("rapl", "1"),
        ("redfish", "https://bmc/redfish/v1/Chassis/1"), ("meter", "quarch-cli --stream"),
        ("drive", "")]
    assert specs[1].params == {"user": "admin", "password-file": "/root/bmc.pw"}
    assert specs[2].interval_s == 2.0 and specs[0].interval_s is None
    assert specs[4].params == {"measures": "drive 12 V"}
    assert specs[1].text == "ipmi:10.0.0.5:6230,user=admin,password-file=/root/bmc.pw"


def test_none_is_no_source():
    assert parse("none") == []


@pytest.mark.parametrize("text, names", [
    ("wattmeter", "unknown source 'wattmeter'.*choose from drive, emulated, ipmi, meter"),
    ("ipmi", r"ipmi needs its argument: ipmi:HOST\[:PORT\]"),
    ("meter", "meter needs its argument: meter:COMMAND"),
    ("redfish:bmc/redfish/v1", "not an http:// or https:// URL"),
    ("rapl:pkg", "the zone is a number"),
    ("emulated:1", "emulated takes no argument"),
    ("user=admin,ipmi:h", "parameter 'user=admin' comes before any source"),
    ("rapl,user=admin", "rapl takes no parameter 'user' .it takes: interval"),
    ("ipmi:h,interval=0", "interval=0 is not a positive number"),
    ("ipmi:h,interval=soon", "interval=soon is not a positive number"),
    ("rapl,,drive", "an empty item"),
    ("rapl,rapl", "names a source twice"),
    ("none,rapl", "'none' means no power source: give it alone"),
    ("none:x", "none takes no argument"),
])
def test_bad_values_name_the_part_and_the_fix(text, names):
    with pytest.raises(PowerSpecError, match=names):
        parse(text)


def test_build_makes_each_kind(tmp_path):
    pw = tmp_path / "pw"
    pw.write_text("s3cret\n")
    ipmi = build(parse(f"ipmi:bmc.lab,user=root,password-file={pw},cipher=17")[0])
    assert isinstance(ipmi, IpmiSource)
    assert (ipmi.bmc.host, ipmi.bmc.port, ipmi.bmc.cipher) == ("bmc.lab", 623, 17)
    assert "-f" in ipmi.bmc.argv("dcmi", "power", "reading") and "s3cret" not in \
        ipmi.bmc.argv("dcmi", "power", "reading")
    rf = build(parse(f"redfish:https://bmc/redfish/v1/Chassis/1,user=root,password-file={pw},"
                     "insecure=yes")[0])
    assert isinstance(rf, RedfishSource)
    assert (rf.service.password, rf.service.verify_tls) == ("s3cret", False)
    assert isinstance(build(parse("rapl:1,interval=0.5")[0]), RaplSource)
    meter = build(parse("meter:my-meter --csv,measures=drive")[0])
    assert isinstance(meter, MeterSource) and meter.info.measures == "drive"
    assert meter.argv == ["my-meter", "--csv"]


def test_build_errors_say_what_is_missing(tmp_path):
    with pytest.raises(PowerSpecError, match="password-file=.*cannot be read"):
        build(parse(f"ipmi:h,password-file={tmp_path / 'none'}")[0])
    with pytest.raises(PowerSpecError, match="port 'x' is not a number"):
        build(parse("ipmi:h:x")[0])
    with pytest.raises(PowerSpecError, match="cipher=aes is not a cipher suite number"):
        build(parse("ipmi:h,cipher=aes")[0])
    with pytest.raises(PowerSpecError, match="needs the emulated SSD: --device emulated"):
        build(parse("emulated")[0])
    with pytest.raises(PowerSpecError, match="reads no drive-reported power"):
        build(parse("drive")[0])
    seen = []
    assert build(SourceSpec("drive"), drive=lambda spec: seen.append(spec) or "the drive's") \
        == "the drive's" and seen == [SourceSpec("drive")]


def test_check_says_which_source_answers(tmp_path):
    meter = build(parse(f"meter:{sys.executable} -c \"print('1700000000 5')\",interval=0.2")[0])
    silent = build(parse(f"meter:{sys.executable} -c pass,interval=0.2")[0])
    rapl = RaplSource(0, root=tmp_path)
    result = dict(check([meter, silent, rapl]))
    assert result[meter.info.name] == ""
    assert "the meter command ended (status 0)" in result[silent.info.name]
    assert "does not exist" in result["rapl:0"]
