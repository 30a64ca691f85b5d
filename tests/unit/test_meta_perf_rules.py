"""META-PERF-7, -10, -12 (v2.7 section 20.2) and v2.0's FB-PERF-7 (pts.stored.meta_perf_rules),
each seen passing and failing: on QEMU 10's recorded controller facts (tests/support/
qemu10_drive.recorded_facts, the product's reader) with the run's facts beside them (the
shape of pts.stored.run_facts), each fact changed once to the other side."""

from __future__ import annotations

import copy

import pytest

from pts.stored import host_judge
from tests.support.qemu10_drive import recorded_facts

RUN = {"form_factor": None, "form_factor_from": "", "kernel": "6.12.9-amd64",
       "io_scheduler": "none", "ioengine": "io_uring", "io_poll": False, "devices": 1,
       "devices_recorded": True, "power": {"rounds": [], "points": []}}


@pytest.fixture(scope="module")
def qemu(tmp_path_factory):
    return recorded_facts(tmp_path_factory.mktemp("qemu10"))


def verdict(facts: dict, rid: str, version: str = "2.7"):
    (found,) = [v for v in host_judge.judge(facts, version) if v.req_id == rid]
    return found


def with_run(qemu: dict, **run) -> dict:
    return {**copy.deepcopy(qemu), "run": RUN | run}


def test_meta_perf_7_the_scheduler_none(qemu):
    v = verdict(with_run(qemu), "META-PERF-7")
    assert (v.verdict, v.why, v.line) == ("PASS", 'the run\'s device used the I/O scheduler '
                                          '"none"', 11883)
    v = verdict(with_run(qemu, io_scheduler="mq-deadline"), "META-PERF-7")
    assert (v.verdict, v.evidence[0].value) == ("FAIL", "mq-deadline")
    assert verdict(with_run(qemu, io_scheduler=None), "META-PERF-7").verdict == "NOT CHECKED"
    v = verdict(qemu, "META-PERF-7")           # no run facts: not read
    assert (v.verdict, v.why) == ("NOT CHECKED", "not read in this run: run")
    # v2.0 asked for kyber
    assert verdict(with_run(qemu), "FB-PERF-7", "2.0").verdict == "FAIL"
    assert verdict(with_run(qemu, io_scheduler="kyber"), "FB-PERF-7", "2.0").verdict == "PASS"


def test_meta_perf_10_the_kernel(qemu):
    v = verdict(with_run(qemu), "META-PERF-10")
    assert v.verdict == "PASS" and v.why.startswith("kernel 6.12.9-amd64: 6.11.1 or later")
    for kernel in ("6.11.1", "7.0.0-rc1"):
        assert verdict(with_run(qemu, kernel=kernel), "META-PERF-10").verdict == "PASS", kernel
    # Debian 12's kernel (the QEMU guest's, tests/data/qemu-10/README.md)
    v = verdict(with_run(qemu, kernel="6.1.0-56-amd64", ioengine="libaio"), "META-PERF-10")
    assert (v.verdict, v.why) == ("FAIL", "kernel 6.1.0-56-amd64 is older than 6.11.1; the "
                                  "run's fio engine: libaio")
    assert [e.value for e in v.evidence] == ["6.1.0-56-amd64", "libaio"]
    assert verdict(with_run(qemu, kernel="6.11.0"), "META-PERF-10").verdict == "FAIL"
    assert verdict(with_run(qemu, kernel=""), "META-PERF-10").verdict == "NOT CHECKED"
    assert verdict(qemu, "META-PERF-10").verdict == "NOT CHECKED"


def test_meta_perf_12_the_configuration(qemu):
    v = verdict(with_run(qemu), "META-PERF-12")
    # QEMU 10: PS 0 current and default, link 2.5 GT/s x1 of 2.5 GT/s x1 (LNKCAP 0x411);
    # TNVMCAP 0 with Namespace Management: OP not judged
    assert v.verdict == "PASS" and v.line == 11895
    assert v.why == ("the default power state (0) in use; one SSD; PCIe link at the drive's "
                     "maximum, 2.5 GT/s x1; not judged: OP (TNVMCAP 0 with Namespace "
                     "Management: the capacity left out of the namespaces is not reported)")
    f = with_run(qemu)
    f["id_ctrl"].update(tnvmcap=str(4 << 40), unvmcap=str(1 << 40))
    v = verdict(f, "META-PERF-12")
    assert v.verdict == "FAIL" and v.why.startswith(
        "not the default OP: 1,099,511,627,776 of 4,398,046,511,104 bytes")
    f["id_ctrl"]["unvmcap"] = "0"
    assert verdict(f, "META-PERF-12").why.startswith("default OP (UNVMCAP 0")
    f = with_run(qemu)
    f["feature_02h"] = 2
    assert verdict(f, "META-PERF-12").why.startswith("power state 2 in use, not the default 0")
    f = with_run(qemu)
    del f["feature_02h_default"]
    assert "not judged: OP (" in verdict(f, "META-PERF-12").why and "Get Features 02h SEL 1 " \
        "not read" in verdict(f, "META-PERF-12").why
    assert verdict(with_run(qemu, devices=2), "META-PERF-12").why.startswith(
        "2 SSDs in the session, not one")
    assert "one SSD (a run does not record" in verdict(with_run(qemu, devices_recorded=False),
                                                       "META-PERF-12").why
    f = with_run(qemu)
    f["pci"]["lnkcap"] = 0x443          # 8 GT/s x4 capable
    v = verdict(f, "META-PERF-12")
    assert v.verdict == "FAIL" and v.why.startswith("PCIe link at 2.5 GT/s x1, below the "
                                                    "drive's 8 GT/s x4; not judged: OP (")
    f = with_run(qemu)
    del f["pci"]
    assert "the PCIe link (not read in this run: pci)" in verdict(f, "META-PERF-12").why
    assert verdict(qemu, "META-PERF-12").why == "not read in this run: run"
