"""io_uring with a fio before 3.39 and a non-power-of-two iodepth (issue 38 §3): refused at
session start from the selected tests' plans (pts.session.engine_check), not when the job is
about to run after the purge and the preconditioning; for an ssh:// drive the DUT host's fio
is the one asked (its fio --server runs the engine), also by the run-time check."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pts.device.remote import fio_version
from pts.session import engine_check
from pts.tools.fio import Fio, FioError, engine_options, job_file, random_job
from pts.tools.fio_engine import rounded_depths

# what --dry-run prints of a job section: indented (pts.procedure.plan.indent)
PLANS = {"test_dirth": ["DIRTH test", "    [p00]", "    iodepth=32", "    [p01]",
                        "    iodepth=6", "    [p02]", "    iodepth=3"],
         "test_cbw": ["CBW test", "    [p00]", "    iodepth=6"],
         "test_iops": ["IOPS test", "    [p00]", "    iodepth=32"]}


class Item:
    def __init__(self, name):
        self.nodeid = f"pts/suite/{name}.py::{name}"
        self.name = name


@pytest.fixture
def planned(monkeypatch):
    """Plans by item name; which items were planned is kept."""
    seen = []

    def plan(settings, dev, item):
        seen.append(item.name)
        return PLANS[item.name]
    monkeypatch.setattr(engine_check, "item_plan", plan)
    return seen


def settings(engine="io_uring", poll=False):
    return SimpleNamespace(ioengine=engine, io_poll=poll)


class DutHost:
    """The DUT host of an ssh:// drive: its `fio --version` says `version`."""
    def __init__(self, version):
        self.version, self.ran = version, []

    def run(self, argv, log_file=None, timeout=None, check=True):
        self.ran.append(argv)
        return SimpleNamespace(stdout=self.version + "\n")


def remote_dev(version):
    return SimpleNamespace(remote=SimpleNamespace(host="dut7"), host=DutHost(version))


LOCAL_DEV = SimpleNamespace(remote=None, host=None)


def test_the_selected_tests_depths_are_named_with_their_tests_and_the_fix(planned):
    items = [Item("test_iops"), Item("test_dirth"), Item("test_cbw")]
    why = engine_check.refusal(settings(), LOCAL_DEV, items, version="fio-3.33")
    assert why.startswith("--ioengine io_uring: fio-3.33 runs a non-power-of-two iodepth")
    assert "(3 as 4 in test_dirth, 6 as 8 in test_dirth, test_cbw; fixed in fio 3.39)" in why
    assert "run with --ioengine libaio, or install fio 3.39 or later" in why
    assert why.endswith("(refused before anything is written)")
    assert planned == ["test_iops", "test_dirth", "test_cbw"]


def test_powers_of_two_libaio_and_fio_3_39_pass(planned):
    assert engine_check.refusal(settings(), LOCAL_DEV, [Item("test_iops")],
                                version="fio-3.33") is None
    assert engine_check.refusal(settings(poll=True), LOCAL_DEV, [Item("test_dirth")],
                                version="fio-3.39") is None
    assert planned == ["test_iops"]              # fio 3.39: no plan built
    assert engine_check.refusal(settings("libaio"), LOCAL_DEV, [Item("test_dirth")]) is None
    assert planned == ["test_iops"]              # libaio: no plan built, no fio asked


def test_an_ssh_drive_is_judged_on_the_dut_hosts_fio(planned):
    """This host's fio is 3.33 (Debian 12); a DUT host with 3.39 runs depth 6 as asked, one
    with 3.33 is refused, the message naming the DUT host."""
    items = [Item("test_dirth")]
    newer = remote_dev("fio-3.39")
    assert engine_check.refusal(settings(), newer, items) is None
    assert newer.host.ran == [["fio", "--version"]]
    older = remote_dev("fio-3.33")
    why = engine_check.refusal(settings(), older, items)
    assert why.startswith("--ioengine io_uring: fio-3.33 on the DUT host dut7 runs")


def test_fio_version_reads_the_dut_hosts_fio():
    assert fio_version(remote_dev("fio-3.41")) == "fio-3.41"
    assert fio_version(LOCAL_DEV) == Fio().version         # a local drive: this host's fio


def test_the_run_time_check_asks_the_fio_that_runs_the_engine(tmp_path):
    """Fio.run_document refuses by engine_version (the DUT host's for an ssh:// drive, set
    by the run), not by the controller's fio."""
    absent = "/proc/pts-no-such-folder/dev"
    text = job_file(absent, [random_job("p06", 100, 4096, 6, 1, 1, 4096)])
    fio = Fio()
    fio.engine = engine_options("io_uring")
    fio.version, fio.engine_version = "fio-3.39", "fio-3.33"
    with pytest.raises(FioError, match="install fio 3.39 or later"):
        fio.run_document(absent, text, tmp_path, "a", timeout=60, histograms=False)
    assert not (tmp_path / "a.fio").exists()                # refused before fio started
    fio.version, fio.engine_version = "fio-3.33", "fio-3.39"
    with pytest.raises(FioError) as exc:                    # fio runs; the device is absent
        fio.run_document(absent, text, tmp_path, "b", timeout=60, histograms=False)
    assert "3.39 or later" not in str(exc.value) and (tmp_path / "b.fio").exists()


def test_an_indented_plan_is_read_like_a_job_file():
    assert rounded_depths("\n".join(PLANS["test_dirth"]), engine_options("io_uring"),
                          "fio-3.33") == [3, 6]
