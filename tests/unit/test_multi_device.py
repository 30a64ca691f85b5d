"""Several --device in one session (pts.session): the option handling, the refusal of the
whole session before anything runs, the lock handed from the parent to a child run, and
the mapping of a child's items to the parent's. (The session on loop devices, with fio:
tests/e2e/test_multi_device.py.)"""

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from pts.device.lock import INHERITED_FD_ENV, DeviceLock
from pts.device.safety import UnsafeDeviceError
from pts.session import gate, resumed
from pts.session.devices import (
    CHILD_LOG_PLUGIN,
    MultiDeviceError,
    check_combination,
    child_args,
    given_devices,
    labels,
    run_folder_from_output,
)
from pts.session.replay import parent_nodeid
from pts.tools.hosts import LOCAL
from tests.support.ptsrun import run_suite


def test_given_devices_and_labels():
    assert given_devices(None) == [] and given_devices("/dev/sda") == ["/dev/sda"]
    assert labels(["/dev/loop5", "/dev/disk/by-id/nvme-ACME_X1", "emulated:64M:slow",
                   "emulated:64M:slow", "/dev/loop5"]) == [
        "loop5", "nvme-ACME_X1", "emulated:64M:slow", "emulated:64M:slow#2", "loop5#2"]


def test_resume_takes_one_device():
    check_combination(["/dev/a"], "runs/x")
    check_combination(["/dev/a", "/dev/b"], None)
    with pytest.raises(MultiDeviceError, match="--resume continues one run on the device its "
                                               "run folder names; 2 --device were given"):
        check_combination(["/dev/a", "/dev/b"], "runs/x")


def test_child_args_replace_the_devices_and_drop_parent_only_options(tmp_path):
    log = tmp_path / "0.jsonl"
    args = ["pts/", "--device", "/dev/a", "--device=/dev/b", "--destructive", "-k", "iops",
            "--skip-refused-devices", "--junitxml", "out.xml", "--junit-xml=o2.xml",
            "--reports-dir", "r", "--render-jobs", "2", "--render-jobs=3", "--point-seconds",
            "1"]
    assert child_args(args, "/dev/b", log) == [
        "pts/", "--destructive", "-k", "iops", "--reports-dir", "r", "--point-seconds", "1",
        "--device", "/dev/b", "-p", CHILD_LOG_PLUGIN, "--pts-child-log", str(log)]


def test_run_folder_from_a_childs_output():
    assert run_folder_from_output(["x", "PTS report: /r/M_S/20260101T000000/report.pdf",
                                   "== 1 passed =="]) == Path("/r/M_S/20260101T000000")
    kept = ("PTS report could not be rendered (ValueError: x); data kept in /r/M_S/T1; "
            "retry with: python -m pts report /r/M_S/T1")
    assert run_folder_from_output([kept]) == Path("/r/M_S/T1")
    assert run_folder_from_output(["ERROR: refusing to write"]) is None


def test_parent_item_of_a_childs_item():
    assert parent_nodeid("pts/suite/test_iops.py::test_iops", "loop5") == \
        "pts/suite/test_iops.py::test_iops[loop5]"
    assert parent_nodeid("pts/suite/test_throughput.py::test_throughput[throughput-128k]",
                         "loop5") == \
        "pts/suite/test_throughput.py::test_throughput[throughput-128k-loop5]"


def test_every_device_is_checked_and_every_reason_named():
    givens = ["/nonexistent", "/dev/null", "emulated:1:2:3:4"]
    checked = gate.check_all(givens, labels(givens), destructive=True,
                             check_capacity=lambda dev: None)
    assert [c.accepted for c in checked] == [False, False, False]
    text = gate.refusal(checked)
    assert text.startswith("refusing the whole session: [nonexistent] ")
    assert "no such device" in text and "[null] " in text and "not a block device" in text
    assert "[emulated:1:2:3:4] --device emulated:1:2:3:4: write emulated" in text
    assert "Nothing was written to any of the 3 devices" in text
    assert "--skip-refused-devices" in text


def test_one_refused_device_refuses_the_session_before_anything_runs(tmp_path):
    p = run_suite("--device", "/nonexistent", "--device", "/dev/null", "--destructive",
                  "--reports-dir", str(tmp_path / "r"))
    assert p.returncode == 4, p.stdout + p.stderr          # pytest usage error
    assert "refusing the whole session: [nonexistent]" in p.stderr
    assert "Nothing was written to any of the 2 devices" in p.stderr
    assert not (tmp_path / "r").exists()
    # --skip-refused-devices cannot make a session of no device at all
    p = run_suite("--device", "/nonexistent", "--device", "/dev/null", "--destructive",
                  "--skip-refused-devices", "--reports-dir", str(tmp_path / "r"))
    assert p.returncode == 4 and "refusing the whole session" in p.stderr


def test_resume_with_several_devices_is_a_usage_error(tmp_path):
    p = run_suite("--resume", str(tmp_path), "--device", "/dev/a", "--device", "/dev/b")
    assert p.returncode == 4
    assert "--resume continues one run on the device its run folder names" in p.stderr


HOLD = """
import os, sys
from types import SimpleNamespace
from pathlib import Path
from pts.device.lock import DeviceLock
from pts.device.safety import UnsafeDeviceError
from pts.tools.hosts import LOCAL
dev = SimpleNamespace(devno=(7, 999), given="/dev/fake", host=LOCAL, sysfs=Path("/sys/block/fake"))
try:
    lock = DeviceLock(dev, Path(sys.argv[1])).acquire()
except UnsafeDeviceError as exc:
    print("REFUSED", exc)
else:
    print("LOCKED", lock.fd)
"""


def test_the_lock_is_handed_to_the_child_and_only_to_it(tmp_path):
    dev = SimpleNamespace(devno=(7, 999), given="/dev/fake", host=LOCAL,
                          sysfs=Path("/sys/block/fake"))     # no diskseq: keyed by number
    lock = DeviceLock(dev, tmp_path).acquire()
    try:
        def child(env_fd, pass_fds=()):
            env = {k: v for k, v in os.environ.items() if k != INHERITED_FD_ENV}
            if env_fd is not None:
                env[INHERITED_FD_ENV] = str(env_fd)
            return subprocess.run([sys.executable, "-c", HOLD, str(tmp_path)], env=env,
                                  pass_fds=pass_fds, capture_output=True, text=True,
                                  check=True).stdout
        assert child(lock.fd, (lock.fd,)).startswith("LOCKED")        # handed down
        assert child(None).startswith("REFUSED")                        # anyone else
        assert child(lock.fd).startswith("REFUSED")                     # a number is not enough
        with pytest.raises(UnsafeDeviceError, match="already under test"):
            DeviceLock(dev, tmp_path).acquire()
    finally:
        lock.release()
    assert child(None).startswith("LOCKED")                             # free again


def test_render_jobs_default_to_the_cores_and_refuse_less_than_one():
    from pts.session.parent import render_jobs
    assert render_jobs(None) == (os.cpu_count() or 1) and render_jobs(3) == 3
    with pytest.raises(MultiDeviceError, match=r"--render-jobs 0: give at least 1"):
        render_jobs(0)


def _run_folder(root: Path, name: str, given: str, remote: dict | None = None,
                **options) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    device = {"given": given, "remote": remote}
    (folder / "run.json").write_text(json.dumps({"device": device, "options": {
        "device": given, "destructive": True, "round_mode": "stonewalled", "purge": "trim",
        "iops_block_sizes": ["4KiB", "8KiB"], "no_such_option": 1, "ssh_config": None,
        **options}}))
    (folder / "ledger.jsonl").write_text("")
    return folder


def test_several_resumes_are_drives_on_the_devices_their_runs_name(tmp_path):
    a = _run_folder(tmp_path, "a", "ssh://root@10.0.0.2:2222/dev/loop3",
                    remote={"host": "10.0.0.2", "ssh_port": 2222, "fio_port": 8766,
                            "ssh_config": "/lab/ssh_config"})
    b = _run_folder(tmp_path, "b", "/dev/loop4", round_mode="pipelined")
    known = SimpleNamespace(round_mode=None, purge=None, iops_block_sizes=None,
                            ssh_config=None, fio_port=8765, device=None)
    drives = resumed.drives([str(a), str(b)], known)
    assert [(d.given, d.label, d.host) for d in drives] == [
        ("ssh://root@10.0.0.2:2222/dev/loop3", "10.0.0.2:2222:loop3", "root@10.0.0.2:2222"),
        ("/dev/loop4", "loop4", "this machine")]
    # the parent checks each drive with its run's own options (not the command line's) ...
    # (and the ssh:// connection it ran over: run.json keeps it with the device)
    assert drives[0].options == {"round_mode": "stonewalled", "purge": "trim",
                                 "iops_block_sizes": "4KiB,8KiB",
                                 "ssh_config": "/lab/ssh_config", "fio_port": 8766}
    assert drives[1].option("round_mode") == "pipelined"
    # ... and its child gets only --resume: it takes the rest from run.json itself
    assert drives[1].child_args() == ["--resume", str(b)]
    args = child_args(["pts/", "--resume", str(a), "--resume", str(b), "--destructive"],
                      "/dev/loop4", Path("log"), drives[1].child_args())
    assert args[:4] == ["pts/", "--destructive", "--resume", str(b)]
    assert str(a) not in args


def test_several_resumes_refuse_one_device_twice_and_a_folder_that_is_no_run(tmp_path):
    a = _run_folder(tmp_path, "a", "/dev/loop4")
    b = _run_folder(tmp_path, "b", "/dev/loop4")
    known = SimpleNamespace()
    with pytest.raises(MultiDeviceError, match="two of the run folders ran on /dev/loop4"):
        resumed.drives([str(a), str(b)], known)
    with pytest.raises(MultiDeviceError, match=f"--resume {tmp_path}: not a run folder"):
        resumed.drives([str(a), str(tmp_path)], known)


def test_several_resumes_with_a_device_is_a_usage_error(tmp_path):
    a = _run_folder(tmp_path, "a", "/dev/loop4")
    b = _run_folder(tmp_path, "b", "/dev/loop5")
    p = run_suite("--resume", str(a), "--resume", str(b), "--device", "/dev/loop6")
    assert p.returncode == 4
    assert "several --resume: each run goes on on the device its run folder names" in p.stderr


def test_several_resumes_give_each_drives_settings_its_own_run_folder():
    # The session's settings are made once per drive; with several --resume each drive's
    # make sees its own folder (a resumed run's workload file is checked against it), never
    # the list, and the options are as they were afterwards.
    from pts.session import parent
    from pts.session.inventory import Drive
    drives = {f"/dev/x{k}": Drive("h", f"/dev/x{k}", f"d{k}", (), {"purge": "trim"},
                                  resume=f"/runs/r{k}") for k in (1, 2)}
    config = SimpleNamespace(option=SimpleNamespace(resume=["/runs/r1", "/runs/r2"],
                                                    device=None, purge="auto"))
    seen = []

    def settings_of(cfg):
        seen.append((cfg.option.device, cfg.option.resume, cfg.option.purge))
        return len(seen)
    assert parent._settings(config, settings_of, list(drives), drives) == 1
    assert seen == [("/dev/x1", "/runs/r1", "trim"), ("/dev/x2", "/runs/r2", "trim")]
    assert (config.option.resume, config.option.purge) == (["/runs/r1", "/runs/r2"], "auto")


def test_the_sessions_comparison_is_written_with_compares_own_options(tmp_path):
    """The session's end (pts.session.outcome.write_comparison) runs compare's code with
    compare's own defaults: when compare gained --where, a hand-made argument list lacked it
    and every several-device session ended "PTS comparison not written" (seen in the slow
    tier's three session tests). Two stored runs: compare.csv and compare.pdf written, the
    comparison's path printed last."""
    from pts.session import outcome
    from tests.support.synthetic.runfactory import build_run

    runs = {"d1": build_run(tmp_path / "runs", "a"), "d2": build_run(tmp_path / "runs", "b")}
    checked = [gate.Checked(given=f"/dev/{label}", label=label) for label in runs]
    lines = outcome.write_comparison(tmp_path / "reports", checked, runs, {"d1": 0, "d2": 0})
    session = next((tmp_path / "reports" / "sessions").iterdir())
    assert lines[-1] == f"PTS comparison: {session / 'compare.pdf'}", lines
    assert (session / "compare.csv").stat().st_size > 0
    assert (session / "compare.pdf").read_bytes().startswith(b"%PDF")
    devices = json.loads((session / "session.json").read_text())["devices"]
    assert [d["run_folder"] for d in devices] == [str(runs["d1"]), str(runs["d2"])]
