"""Devices on other hosts, without a host: the ssh:// URL, the ssh command (argv quoted
exactly once), fio's client command line and its client/server JSON, the logs fio --client
writes back, what is refused for a remote device, and the safety gate reading through a
host (a fake one that serves /proc and /sys files from a dict)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from pts.cli import remote
from pts.device import safety
from pts.device.identity import BlockDevice, Identity
from pts.tools import commands, fio_logs, hosts
from pts.tools.fio import Fio, parse_output


@pytest.mark.parametrize("given, want", [
    ("ssh://dut1/dev/nvme0n1", ("dut1", None, None, "/dev/nvme0n1")),
    ("ssh://root@10.0.0.7:2222/dev/loop3", ("10.0.0.7", "root", 2222, "/dev/loop3")),
    ("ssh://qa@[fe80::1]/dev/sda", ("[fe80::1]", "qa", None, "/dev/sda")),
    ("ssh://dut1:22/dev/disk/by-path/pci-0000:01:00.0-nvme-1",
     ("dut1", None, 22, "/dev/disk/by-path/pci-0000:01:00.0-nvme-1")),
])
def test_urls_are_parsed(given, want):
    r, path = hosts.parse(given)
    assert (r.host, r.user, r.ssh_port, path) == want
    assert r.fio_port == hosts.DEFAULT_FIO_PORT == 8765
    assert r.url(path) == given


@pytest.mark.parametrize("given", ["ssh://dut1", "ssh://dut1/tmp/x", "ssh://dut1/dev/a;b",
                                   "ssh://dut1:99999/dev/sda", "ssh://a b/dev/sda",
                                   "ssh://dut1/emulated:1GiB"])
def test_bad_urls_name_the_form(given):
    with pytest.raises(hosts.RemoteError, match=r"ssh://\[USER@\]HOST\[:SSHPORT\]/dev/NAME|port"):
        hosts.parse(given)


def test_bad_fio_port_and_missing_ssh_config_are_refused(tmp_path):
    with pytest.raises(hosts.RemoteError, match="--fio-port 0"):
        hosts.parse("ssh://dut1/dev/sda", fio_port=0)
    with pytest.raises(hosts.RemoteError, match="--ssh-config .*no such file"):
        hosts.parse("ssh://dut1/dev/sda", ssh_config=str(tmp_path / "nope"))


def test_the_ssh_command_quotes_the_argv_exactly_once(tmp_path):
    cfg = tmp_path / "cfg"
    cfg.write_text("")
    r, _ = hosts.parse("ssh://root@dut1:2200/dev/sda", ssh_config=str(cfg))
    argv = ["wipefs", "--json", "/dev/weird name;rm -rf /"]
    ssh = r.ssh_argv(argv)
    assert ssh[:3] == ["ssh", "-o", "BatchMode=yes"]
    assert ssh[ssh.index("-F") + 1] == str(cfg) and ssh[ssh.index("-p") + 1] == "2200"
    assert ssh[-3:-1] == ["root@dut1", "--"]
    assert shlex.split(ssh[-1]) == argv          # what the remote shell gets back: the argv
    # one shared connection per host and ssh config: its master (master_argv) runs in the
    # foreground, the suite's child (tests/unit/test_remote_hosts_master.py), its socket in
    # a folder of the suite's own
    path = ssh[ssh.index(f"ControlPath={r.control_path}")].split("=", 1)[1]
    assert Path(path).parent == hosts._shared.folder and "ControlMaster=no" in ssh
    master = r.master_argv()
    assert master[-2:] == ["-N", "root@dut1"] and "ControlMaster=yes" in master
    assert "ControlPersist=no" in master and f"ControlPath={path}" in master
    other, _ = hosts.parse("ssh://root@dut1:2200/dev/sda")
    assert other.control_path != r.control_path          # another config, another socket


class Recorded(hosts.SshHost):
    """An SshHost whose ssh runs nothing: the argv it would run, and canned results."""

    def __init__(self, results: dict[str, tuple[int, str]]):
        super().__init__(hosts.Remote("dut1", "root"))
        self.results, self.ran = results, []

    def run(self, argv, *, log_file=None, timeout=None, check=True):
        self.ran.append(argv)
        code, out = self.results.get(shlex.join(argv), (1, ""))
        return commands.CommandResult(tuple(self.remote.ssh_argv(argv)), code, out, "", 0.0)


def test_remote_files_nodes_and_directories_go_through_ssh_commands():
    h = Recorded({"cat -- /proc/swaps": (0, "Filename Type\n"),
                  "stat -L -c '%F|%t|%T|%d|%i' -- /dev/loop3": (0, "block special file|7|3|5|9\n"),
                  "ls -1A -- /sys/block/loop3/holders": (0, "dm-0\n"),
                  "readlink -f -- /dev/disk/x": (0, "/dev/loop3\n")})
    assert h.read("/proc/swaps") == "Filename Type"
    assert h.read("/nope", "d") == "d"
    assert h.stat("/dev/loop3") == hosts.Node("block", (7, 3), 5, 9)
    assert h.stat("/nope") is None
    assert h.listdir("/sys/block/loop3/holders") == ["dm-0"]
    assert h.realpath("/dev/disk/x") == "/dev/loop3"
    assert all(isinstance(a, list) for a in h.ran)


def test_ssh_failures_are_tool_errors_naming_the_host(monkeypatch):
    host = hosts.SshHost(hosts.Remote("dut1"))
    for code, kind, text in ((255, commands.ToolFailed, "ssh to dut1 failed"),
                             (127, commands.ToolMissing, "not installed on dut1"),
                             (3, commands.ToolFailed, "on dut1 exited with status 3")):
        monkeypatch.setattr(commands, "run", lambda argv, code=code, **kw:
                            commands.CommandResult(tuple(argv), code, "", "boom", 0.0))
        argv = ["nvme", "list"]           # not run: commands.run is the fake above
        with pytest.raises(kind, match=text):
            host.run(argv)


def _fake_device(host_files: dict[str, str]) -> tuple[BlockDevice, Recorded]:
    results = {f"cat -- {p}": (0, t) for p, t in host_files.items()}
    results |= {"stat -L -c '%F|%t|%T|%d|%i' -- /": (0, "directory|0|0|2049|2\n"),
                "stat -L -c '%F|%t|%T|%d|%i' -- /dev/loop3": (0, "block special file|7|3|5|9"),
                "readlink -f -- /sys/dev/block/8:1": (0, "/sys/devices/x/block/sda/sda1\n"),
                "test -e /sys/devices/x/block/sda/sda1": (0, ""),
                "test -e /sys/devices/x/block/sda/sda1/partition": (0, ""),
                "cat -- /sys/devices/x/block/sda/dev": (0, "8:0\n")}
    rec = Recorded(results)
    dev = BlockDevice("/dev/loop3", "ssh://root@dut1/dev/loop3", "loop3", (7, 3), 1 << 30, 512,
                      512, "loop", False, Identity("m", "s", "f", "sysfs"),
                      remote=rec.remote)
    return dev, rec


def test_the_safety_gate_reads_the_remote_hosts_mounts_and_swap(monkeypatch):
    mountinfo = ("22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
                 "30 22 7:3 / /mnt/data rw - ext4 /dev/loop3 rw\n")
    dev, rec = _fake_device({"/proc/self/mountinfo": mountinfo,
                             "/proc/swaps": "Filename Type Size Used Priority\n"})
    monkeypatch.setattr(BlockDevice, "host", property(lambda self: rec))
    reasons = safety.in_use_reasons(dev)
    assert reasons == ["/dev/loop3 is mounted on /mnt/data (on root@dut1)"]
    assert ["cat", "--", "/proc/self/mountinfo"] in rec.ran
    with pytest.raises(safety.UnsafeDeviceError, match="mounted on /mnt/data"):
        safety.check_writable(dev, destructive=True)


def test_fio_runs_as_client_of_the_dut_hosts_server(tmp_path, monkeypatch):
    monkeypatch.setattr(commands, "run", lambda argv, **kw:
                        commands.CommandResult(tuple(argv), 0, "fio-3.33\n", "", 0.0))
    fio = Fio(remote=hosts.Remote("10.0.0.7", fio_port=9000))
    argv = fio.argv(tmp_path / "p.json", tmp_path / "p.fio")
    assert argv[1:] == ["--output-format=json", f"--output={tmp_path / 'p.json'}",
                        "--client=10.0.0.7,9000", str(tmp_path / "p.fio")]
    ran = []

    def no_node(argv, **kw):          # stat over ssh: "No such file or directory"
        ran.append(argv)
        return commands.CommandResult(tuple(argv), 1, "", "stat: cannot statx", 0.0)
    monkeypatch.setattr(commands, "run", no_node)
    gone = fio.device_gone("/dev/nvme9n1")
    assert gone is not None and "disappeared" in str(gone)
    assert ran[0][0] == "ssh" and ran[0][-1].startswith("stat -L")   # asked on the DUT host


def test_client_stats_json_gives_the_jobs_without_the_all_clients_sum():
    doc = {"fio version": "fio-3.33", "client_stats": [
        {"jobname": "p00", "groupid": 0, "hostname": "127.0.0.1"},
        {"jobname": "p01", "groupid": 1, "hostname": "127.0.0.1"},
        {"jobname": "All clients", "groupid": 1}]}
    text = "<vm> p00: (g=0): rw=randwrite\n" + json.dumps(doc)
    assert [j["jobname"] for j in parse_output(text)["jobs"]] == ["p00", "p01"]


def test_logs_written_back_by_fio_client_are_found(tmp_path):
    for name in ("p00_lat.2.log.127.0.0.1", "p00_lat.1.log.127.0.0.1", "p00_clat.1.log"):
        (tmp_path / name).write_text("")
    assert [p.name for p in fio_logs.thread_files(tmp_path / "p00", "lat")] == \
        ["p00_lat.1.log.127.0.0.1", "p00_lat.2.log.127.0.0.1"]
    assert fio_logs.thread_files(Path(tmp_path / "p00"), "clat") == [tmp_path / "p00_clat.1.log"]


@pytest.mark.parametrize("options, fix", [
    ({"round_mode": "pipelined", "purge": "trim"}, "--round-mode stonewalled"),
    ({"round_mode": "stonewalled", "purge": "auto"}, "--purge trim"),
])
def test_what_a_remote_device_cannot_do_is_refused_with_the_fix(options, fix):
    assert fix in remote.refusal("ssh://dut1/dev/nvme0n1", **options)
    assert remote.refusal("/dev/loop3", **options) is None
    assert remote.refusal("ssh://dut1/dev/nvme0n1", round_mode="per-point",
                          purge="none") is None


def test_a_different_fio_on_the_dut_host_is_refused_naming_both(monkeypatch):
    def fake(argv, **kw):
        out = "fio-3.36\n" if argv[0] == "ssh" else "fio-3.33\n"
        return commands.CommandResult(tuple(argv), 0, out, "", 0.0)
    monkeypatch.setattr(commands, "run", fake)
    host = hosts.SshHost(hosts.Remote("dut1", "root"))
    with pytest.raises(remote.DeviceError, match="fio-3.36, here it is fio-3.33"):
        remote._check_fio_versions("ssh://root@dut1/dev/sda", host)
    monkeypatch.setattr(commands, "run", lambda argv, **kw: commands.CommandResult(
        tuple(argv), 0, "fio-3.33\n", "", 0.0))
    remote._check_fio_versions("ssh://root@dut1/dev/sda", host)     # same: accepted


def test_remote_devices_are_labelled_by_host_in_a_session():
    from pts.session.devices import labels
    assert labels(["ssh://root@dut1:2222/dev/sda", "/dev/sda", "ssh://dut2/dev/sda"]) == \
        ["dut1:2222:sda", "sda", "dut2:sda"]


def test_trim_runs_over_ssh_and_a_spec_purge_is_refused_with_the_fix():
    from pts.conditioning import purge
    dev, _ = _fake_device({})
    trim = purge.plan("trim", dev)
    assert trim.command[:3] == ["ssh", "-o", "BatchMode=yes"]
    assert trim.command[-1] == "blkdiscard -v /dev/loop3" and trim.deviation
    with pytest.raises(purge.PurgeError, match="--purge trim"):
        purge.plan("auto", dev)


def test_round_mode_defaults_to_stonewalled_for_a_remote_device_only():
    assert remote.default_round_mode("ssh://dut1/dev/sda") == "stonewalled"
    assert remote.default_round_mode("/dev/sda") == "pipelined"
    assert remote.default_round_mode(None) == "pipelined"
    assert remote.refusal("ssh://dut1/dev/sda", round_mode=None,
                          purge="trim") is None          # not given: the default applies
