"""A drive on "another host" for real, on one machine: an sshd of the test's own (127.0.0.1,
a free port, its own host key, config and authorized key in a temp dir; the system's sshd is
not touched), `fio --server` on 127.0.0.1 and a free port, and a loop device as the remote
drive. The IOPS test runs through `--device ssh://root@127.0.0.1:PORT/dev/loopN` (I/O by fio
client/server, everything else over ssh), and its ledger and report must have the shape of
the same run on a local loop device in the same session. Nothing is left behind (checked at
teardown)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from pts.results.ledger import read_ledger
from pts.tools.fio import parse_output
from tests.support import headers, remote_hosts
from tests.support.helpers import free_port, loop_device, pdf_text
from tests.support.ptsrun import IOPS, PtsRun, check_outcomes, run_suite

pytestmark = [pytest.mark.slow,
              pytest.mark.needs("root", "fio", "losetup", "blkdiscard", "pdftotext", "pdfinfo",
                                "ssh", "sshd", "ssh-keygen", "mkfs.ext4", "mount", "umount")]

SIZE = 256 << 20
ARGS = ("--spec", "pts-e-1.1", "--purge", "trim", "--round-mode", "stonewalled",
        "--point-seconds", "1", "--max-rounds", "5", "--iops-block-sizes", "4KiB",
        "--iops-rw-mixes", "0/100")


@dataclass
class Dut:
    url: str
    ssh_config: Path
    fio_port: int
    sshd: subprocess.Popen
    fio: subprocess.Popen
    folder: Path

    def args(self) -> list[str]:
        return ["--ssh-config", str(self.ssh_config), "--fio-port", str(self.fio_port)]


@contextlib.contextmanager
def loopback_dut(device: str):
    """sshd + fio --server on 127.0.0.1 for `device`; everything stopped and removed after
    (tests/support/remote_hosts.py)."""
    with remote_hosts.keys() as k, remote_hosts.host(k) as h:
        yield Dut(h.url(device), k.ssh_config, h.fio_port, h.sshd, h.fio, k.folder)


def refused_mounted(dut: Dut, base: Path) -> tuple[subprocess.CompletedProcess, str, Path]:
    """A second "remote" drive with a mounted filesystem: the run is refused by the gate
    reading the DUT host's mounts over ssh (the refusal names the host)."""
    mnt = base / "mnt"
    mnt.mkdir()
    with loop_device(16 << 20) as dev:
        subprocess.run(["mkfs.ext4", "-F", "-q", dev], check=True, capture_output=True)
        subprocess.run(["mount", dev, str(mnt)], check=True)
        try:
            url = dut.url.rsplit("/dev/", 1)[0] + dev
            proc = run_suite("--device", url, "--destructive", *dut.args(), *ARGS,
                             "--reports-dir", str(base / "mounted"), target=IOPS, timeout=300)
            left = sorted(p.name for p in mnt.iterdir())
        finally:
            subprocess.run(["umount", str(mnt)], check=True)
    assert "lost+found" in left          # the filesystem is intact
    return proc, dev, mnt


def folder_run(proc: subprocess.CompletedProcess, folder: Path) -> PtsRun:
    records, notes = read_ledger(folder / "ledger.jsonl")
    return PtsRun(proc, 0.0, folder, [r.data for r in records], notes,
                  json.loads((folder / "run.json").read_text()))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The same short IOPS run on a "remote" loop device and on a local one, both in ONE
    session (remote and local devices mix: docs/lab.md, "Several devices in one session")."""
    base = tmp_path_factory.mktemp("remote")
    with loop_device(SIZE) as remote_dev, loop_device(SIZE) as local_dev, \
            loopback_dut(remote_dev) as dut:
        backing = Path(f"/sys/block/{Path(remote_dev).name}/loop/backing_file").read_text()
        no_mode = [a for a in ARGS if a not in ("--round-mode", "stonewalled")]
        dry = run_suite("--device", dut.url, "--dry-run", *dut.args(), *no_mode, target=IOPS,
                        timeout=300)
        refused = run_suite("--device", dut.url, "--destructive", "--purge", "trim",
                            "--round-mode", "pipelined", *dut.args(), "--reports-dir",
                            str(base / "refused"), target=IOPS, timeout=300)
        no_server = run_suite("--device", dut.url, "--dry-run", "--ssh-config",
                              str(dut.ssh_config), "--fio-port", str(free_port()), *ARGS,
                              target=IOPS, timeout=300)
        mounted = refused_mounted(dut, base)
        session = run_suite("--device", dut.url, "--device", local_dev, "--destructive",
                            "--reports-dir", str(base / "reports"), *dut.args(), *ARGS,
                            "--host-ceiling", "auto",
                            target=IOPS, timeout=600)
        print(session.stdout[-4000:], session.stderr[-2000:])
        procs, folder = (dut.sshd, dut.fio), dut.folder
    found = {json.loads(p.read_text())["device"]["given"]: p.parent
             for p in (base / "reports").glob("*/*/run.json")}
    assert sorted(found) == sorted([dut.url, local_dev]), session.stdout + session.stderr
    yield {"dry": dry, "refused": refused, "no_server": no_server, "session": session,
           "mounted": mounted,
           "remote": folder_run(session, found[dut.url]),
           "local": folder_run(session, found[local_dev]), "url": dut.url,
           "fio_port": dut.fio_port, "remote_dev": remote_dev,
           "compare": list((base / "reports").glob("sessions/*/compare.pdf"))}
    # nothing left behind: our sshd and fio server stopped, keys and config gone, loop
    # device detached (tests.support.helpers.loop_device detaches only its own)
    assert all(p.poll() is not None for p in procs)
    assert not folder.exists()
    attached = subprocess.run(["losetup", "-a"], capture_output=True, text=True,
                              check=True).stdout      # a removed file shows as "(deleted)"
    assert backing.strip() not in attached, attached  # no loop device on our file any more


def test_dry_run_shows_the_ssh_and_fio_client_commands(runs):
    out = runs["dry"].stdout
    assert runs["dry"].returncode == 0, out + runs["dry"].stderr     # 5: nothing collected
    assert "ssh -o BatchMode=yes" in out and "-F " in out
    assert f"--client=127.0.0.1,{runs['fio_port']}" in out
    assert f"blkdiscard -v {runs['remote_dev']}" in out     # the purge, run over ssh
    assert "nothing is written" in out
    assert "each starting when the one before has finished" in out   # stonewalled: default


def test_pipelined_rounds_are_refused_for_a_remote_device_with_the_fix(runs):
    p = runs["refused"]
    assert p.returncode == 4, p.stdout + p.stderr
    assert "--round-mode stonewalled" in p.stderr


def test_a_mounted_remote_drive_is_refused_by_the_dut_hosts_mounts(runs):
    proc, dev, mnt = runs["mounted"]
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert f"{dev} is mounted on {mnt} (on root@127.0.0.1)" in proc.stderr
    assert "Nothing was written" in proc.stderr


def test_a_dut_host_without_fio_server_is_refused_at_start_up(runs):
    p = runs["no_server"]
    assert p.returncode == 4, p.stdout + p.stderr
    assert "fio --server is not reachable at 127.0.0.1," in p.stderr and "--fio-port" in p.stderr


def test_remote_run_goes_through_ssh_and_fio_client_server(runs):
    r = runs["remote"]
    assert r.run_json["device"]["given"] == runs["url"]
    assert r.run_json["device"]["remote"]["fio_port"] == runs["fio_port"]
    assert r.run_json["device"]["path"] == runs["remote_dev"]
    logged = [json.loads(line)["argv"] for line in
              (r.folder / "commands.log").read_text().splitlines()]
    ssh = [a for a in logged if a[0] == "ssh"]
    assert ssh and all(a[1:3] == ["-o", "BatchMode=yes"] and "--" in a for a in ssh)
    assert any(a[-1] == f"blkdiscard -v {runs['remote_dev']}" for a in ssh)   # quoted once
    fio = [a for a in logged if os.path.basename(a[0]) == "fio"]
    assert fio and all(f"--client=127.0.0.1,{runs['fio_port']}" in a for a in fio)
    purge = r.of_type("purge")[0]
    assert purge["command"][0] == "ssh" and purge["deviation"]
    rounds = sorted(r.folder.glob("raw/iops/round-*/round.json"))
    # fio --client's own JSON (kept as fio wrote it: its job lines, then the document)
    assert rounds and all('"client_stats"' in p.read_text() for p in rounds)
    assert all(parse_output(p.read_text())["jobs"] for p in rounds)
    # fio's logs came back from the server to the controller (.log.HOST)
    assert list(r.folder.glob("raw/iops/round-*/timing/*.log.127.0.0.1"))


def test_the_host_ceiling_is_measured_on_the_dut_host_through_its_fio_server(runs):
    """Issue 33 §1, remote drives: the RAM-backed device is made on the DUT host (over ssh)
    and the ceiling's fio job runs through the DUT host's fio server, like the points; the
    local drive's ceiling is made and run here."""
    for kind, remote in (("remote", True), ("local", False)):
        r = runs[kind]
        (rec,) = r.of_type("host_ceiling")
        assert rec["error"] is None and rec["device"] == "tmpfs loop", rec
        logged = [json.loads(line)["argv"] for line in
                  (r.folder / "commands.log").read_text().splitlines()]
        made = [a for a in logged if "pts-ceiling-" in " ".join(a) and "--find" in " ".join(a)]
        assert made and all((a[0] == "ssh") == remote for a in made), made
        for job in rec["points"]:
            (fio_job,) = parse_output((r.folder / job["raw"]).read_text())["jobs"]
            where = (fio_job.get("hostname"), fio_job.get("port"))
            assert where == (("127.0.0.1", runs["fio_port"]) if remote else (None, None))
            assert job["iops"] == pytest.approx(fio_job["write"]["iops"])


def test_remote_and_local_devices_mix_in_one_session(runs):
    out = runs["session"].stdout
    # each run's verdict as its recorded rounds give it (ledger, report); exit 0 only if both
    passed = [check_outcomes(runs[k].folder, runs[k].records)["iops"].passed
              for k in ("remote", "local")]
    assert runs["session"].returncode == (0 if all(passed) else 1), out + runs["session"].stderr
    port = runs["url"].split(":")[2].split("/")[0]
    assert f"[127.0.0.1:{port}:{Path(runs['remote_dev']).name}]" in out   # its label
    assert len(runs["compare"]) == 1


def pages_from_contents(pdf: Path) -> list[str]:
    """Each page's band title from the Contents page on ("IOPS — 2D Plot", ...)."""
    titles = [" ".join(w[3] for w in headers._lines(words)[1]).split(" Run ")[0]
              for words in headers.pdf_pages(pdf)]
    return titles[titles.index("Contents — Table of contents"):]


def test_remote_ledger_and_report_have_the_shape_of_a_local_run(runs):
    remote, local = runs["remote"], runs["local"]
    assert [x["type"] for x in remote.records] == [x["type"] for x in local.records]
    r_end, l_end = remote.of_type("test_end")[0], local.of_type("test_end")[0]
    assert r_end["rounds"] == l_end["rounds"]
    cells = [(p["round"], p["rw_mix"], p["block_size"]) for p in remote.of_type("point")]
    assert cells == [(p["round"], p["rw_mix"], p["block_size"]) for p in local.of_type("point")]
    assert all(p["iops"] > 0 for p in remote.of_type("point"))
    wipc = remote.of_type("wipc")[0]
    assert wipc["bytes_written"] == wipc["bytes_expected"] == 2 * SIZE
    # the same pages from the contents on (the summary's length depends on the platform
    # facts each host gives: this host's are read, the DUT host's are not captured)
    assert pages_from_contents(remote.folder / "report.pdf") == \
        pages_from_contents(local.folder / "report.pdf")
    assert len(pages_from_contents(local.folder / "report.pdf")) >= 8
    # the report says where the drive was: the DUT host and fio client rows of run.json's
    # platform block, and its warning that the DUT host's platform was not captured
    platform = remote.run_json["platform"]
    assert (platform["dut_host"], platform["fio_client"]) == (
        "127.0.0.1", f"127.0.0.1,{runs['fio_port']}")
    assert len([w for w in platform["warnings"] if w.startswith(
        "the device is on host 127.0.0.1 (fio client/server): its platform")]) == 1
    r_pdf = pdf_text(remote.folder / "report.pdf")
    for warning in platform["warnings"]:
        assert f"WARNING: Platform: {warning}" in r_pdf
    assert "Dut host 127.0.0.1" in r_pdf and f"Fio client 127.0.0.1,{runs['fio_port']}" in r_pdf
    assert "127.0.0.1" not in pdf_text(local.folder / "report.pdf")
