"""NVMe facts decoded from bytes (pts.tools.nvme_facts) on what QEMU 10's controller really sent
(tests/data/qemu-10/README.md, "Identify, power, command support and Flexible Data
Placement"): each decoded field equals what nvme-cli 2.3 printed for the same structure, read
in the same boot; the FDP WAF of each recorded window; short bytes refused naming the fix; the
FDP logs read with the Endurance Group in --lsi (a stand-in for commands.run writes the
recorded bytes where nvme-cli would: no NVMe drive on the test host)."""

from __future__ import annotations

import json

import pytest

from pts.tools import nvme_facts as F
from pts.tools.commands import CommandResult
from tests.support.helpers import DATA
from tests.support.qemu10_drive import DSSD_NOT_RECORDED

FDP = DATA / "qemu-10" / "fdp"
MOMENTS = ("0", "after-64MiB-phndl0", "after-16MiB-plain", "after-1MiB-phndl1-update")


def raw(name: str) -> bytes:
    return (FDP / name).read_bytes()


def printed(name: str) -> dict:
    return json.loads((FDP / name).read_text())


def test_identify_controller_bytes_are_what_nvme_cli_printed():
    ctrl, doc = F.id_ctrl(raw("nvme-id-ctrl.bin")), printed("nvme-id-ctrl.json")
    names = [f.name for f in F.L.ID_CTRL if f.name not in ("psds", "sn", "mn", "fr", "subnqn")]
    for name in names:
        assert ctrl[name] == F.as_int(doc[name]), name
    assert ctrl["sn"].strip() == doc["sn"].strip() == "PTSQEMU0001"
    assert ctrl["ctratt"] >> 19 & 1                  # FDPS: the subsystem has fdp=on
    assert len(ctrl["psds"]) == doc["npss"] + 1 == 1
    for mine, theirs in zip(ctrl["psds"], doc["psds"], strict=True):
        assert (mine["mp"], mine["flags"], mine["enlat"], mine["exlat"]) == (
            theirs["max_power"], theirs["flags"], theirs["entry_lat"], theirs["exit_lat"])
    assert ctrl["psds"][0]["watts"] == 25.0 and not ctrl["psds"][0]["non_operational"]


def test_power_state_descriptors_from_bytes_constructed():
    """Constructed: QEMU's Identify Controller bytes with NPSS 2 and two more descriptors
    at bytes 2080 and 2112: Maximum Power 1200 (bytes 1:0), flags (byte 3) 02h (NOPS) then 01h
    (MXPS: units of 0.0001 W), entry latency 70000 us (bytes 7:4), exit latency 5000 us
    (bytes 11:8)."""
    data = bytearray(raw("nvme-id-ctrl.bin"))
    data[263] = 2
    for at, flags in ((2080, 2), (2112, 1)):
        data[at:at + 12] = (1200).to_bytes(2, "little") + bytes([0, flags]) + (
            70000).to_bytes(4, "little") + (5000).to_bytes(4, "little")
    data[352:356] = (80).to_bytes(4, "little")        # and PELS (bytes 355:352): 5 MiB
    data[270:272] = (11).to_bytes(2, "little")        # and MTFA (bytes 271:270)
    assert (F.id_ctrl(bytes(data))["pels"], F.id_ctrl(bytes(data))["mtfa"]) == (80, 11)
    states = F.id_ctrl(bytes(data))["psds"]
    assert [(p["state"], p["watts"], p["non_operational"], p["enlat"], p["exlat"])
            for p in states] == [(0, 25.0, False, 16, 4), (1, 12.0, True, 70000, 5000),
                                 (2, 0.12, False, 70000, 5000)]


def test_identify_namespace_bytes_are_what_nvme_cli_printed():
    ns, doc = F.id_ns(raw("nvme-id-ns.bin")), printed("nvme-id-ns.json")
    for name in ("nsze", "nsfeat", "nlbaf", "flbas", "dpc", "dps", "fpi", "dlfeat", "npwg",
                 "endgid", "nguid", "eui64"):
        assert ns[name] == doc[name], name
    assert [(f["ms"], f["lbads"], f["rp"]) for f in ns["lbafs"]] == [
        (f["ms"], f["ds"], f["rp"]) for f in doc["lbafs"]]
    assert ns["in_use"] == 0 and ns["lbafs"][0]["bytes"] == 512


@pytest.mark.parametrize("moment", MOMENTS)
def test_fdp_logs_are_what_nvme_cli_printed(moment):
    same = "0"        # logs 20h, 21h: unchanged, kept once (the README)
    configs = F.fdp_configs(raw(f"log-20h_{same}.bin"))
    doc = printed(f"fdp-configs_{same}.json")["configs"]
    assert [{k: c[k] for k in ("fdpa", "vss", "nrg", "nruh", "nnss", "runs", "erutl")}
            for c in configs] == doc
    assert configs[0]["ruhts"] == [1, 1, 1, 1] and configs[0]["valid"]
    assert F.ruh_usage(raw(f"log-21h_{same}.bin")) == [
        u["ruha"] for u in printed(f"fdp-usage_{same}.json")["ruhus"]] == [1, 1, 1, 0]
    stats, doc = F.fdp_stats(raw(f"log-22h_{moment}.bin")), printed(f"fdp-stats_{moment}.json")
    assert stats == {k: int(doc[k]) for k in ("hbmw", "mbmw", "mbe")}


def test_the_waf_of_each_recorded_window():
    """QEMU 10.0.2 counts media bytes above host bytes when a write fills a reclaim unit (its
    last part again) and when a handle leaves one unwritten (the rest): the README."""
    s = [F.fdp_stats(raw(f"log-22h_{m}.bin")) for m in MOMENTS]
    windows = [F.waf(a, b) for a, b in zip(s, s[1:], strict=False)]
    assert [(w["host_bytes"], w["media_bytes"]) for w in windows] == [
        (64 << 20, (64 << 20) + 8 * (256 << 10)),       # 8 units of 8 MiB filled
        (16 << 20, (16 << 20) + 8192),
        (1 << 20, 8 << 20)]                              # 1 MiB written, 7 MiB left unwritten
    assert [w["waf"] for w in windows] == [1.03125, 1 + 8192 / (16 << 20), 8.0]
    assert F.waf(s[0], s[0])["waf"] is None
    with pytest.raises(F.FactsError, match="went down"):
        F.waf(s[1], s[0])


def test_the_host_event_of_the_handle_update():
    assert F.fdp_events(raw("log-23h-lsp1-host-events_0.bin")) == []
    assert F.fdp_events(raw("log-23h-lsp0-controller-events_0.bin")) == []
    (event,) = F.fdp_events(raw("log-23h-lsp1-host-events_after-1MiB-phndl1-update.bin"))
    assert (event["name"], event["flag_names"], event["pid"], event["nsid"], event["ruhid"]) == (
        "Reclaim Unit Not Fully Written", ["PIV", "NSIDV", "LV"], 1, 1, 1)


def test_effects_features_and_short_bytes():
    ops = F.effects(raw("log-05h_0.bin"))
    assert {0x02, 0x06, 0x09, 0x0A}.issubset(ops["admin"]) and ops["io"][:3] == [0, 1, 2]
    assert F.feature_value((FDP / "feature-02h_current.txt").read_text()) == 0
    assert F.feature_value((FDP / "feature-1dh_current.txt").read_text()) == 1   # FDP on
    with pytest.raises(F.FactsError, match="read it whole"):
        F.id_ctrl(raw("nvme-id-ctrl.bin")[:1024])
    with pytest.raises(F.FactsError, match="handles"):
        F.fdp_configs(raw("log-20h_0.bin")[:80])


class Recorded:
    """Stands in for commands.run: each nvme command answered from the probe's recorded output
    (bytes to stdout_path, text to stdout, or the drive's refusal), every argv kept."""

    FILES = {("id-ctrl",): "nvme-id-ctrl.bin", ("id-ns",): "nvme-id-ns.bin",
             ("admin-passthru",): "identify-cns01h-nsid1.bin",
             ("get-feature", "--sel=0"): "feature-02h_current.txt",
             ("get-feature", "--sel=1"): "feature-02h_default.txt",
             ("get-feature", "--sel=3"): "feature-02h_capabilities.txt",
             ("get-log", "--log-id=0x05"): "log-05h_0.bin",
             ("get-log", "--log-id=0x09"): "log-09h_0.bin",
             ("get-log", "--log-id=0x20"): "log-20h_0.bin",
             ("get-log", "--log-id=0x21"): "log-21h_0.bin",
             ("get-log", "--log-id=0x22"): "log-22h_after-64MiB-phndl0.bin",
             ("get-log", "--log-id=0x23"): "log-23h-lsp1-host-events_0.bin"}

    def __init__(self, refuse: tuple[str, ...] = (), replace: dict | None = None):
        self.calls, self.refuse, self.replace = [], refuse, replace or {}

    def __call__(self, argv, stdout_path=None, **kwargs):
        self.calls.append(list(argv))
        key = next(k for k in self.FILES if all(w in argv for w in k))
        if any(r in argv for r in self.refuse):          # QEMU 10's words for log 00h
            return CommandResult(tuple(argv), 1, "", (FDP / "log-00h_0.bin.stderr.txt")
                                 .read_text(), 0.1)
        data = self.replace.get(key) or raw(self.FILES[key])
        if stdout_path is not None:
            stdout_path.write_bytes(data[:int(argv[4].split("=")[1])]
                                    if argv[1] == "get-log" else data)
            return CommandResult(tuple(argv), 0, "", "", 0.1)
        return CommandResult(tuple(argv), 0, data.decode(), "", 0.1)


def test_read_identity_and_fdp_from_the_recorded_answers(tmp_path):
    run, facts = Recorded(), F.Facts()
    F.read_identity("/dev/nvme0", "/dev/nvme0n1", tmp_path, facts, run=run)
    F.read_fdp("/dev/nvme0", 1, tmp_path, facts, "before", run=run)
    v = facts.values
    assert (v["id_ctrl"]["npss"], v["id_ns"]["endgid"], v["feature_02h"],
            v["feature_02h_capabilities"]) == (0, 1, 0, 0)
    assert v["fdp_stats"]["hbmw"] == 64 << 20 and v["fdp_host_events"] == []
    assert facts.refused == {}
    fdp_calls = [c for c in run.calls if c[1] == "get-log" and c[3] != "--log-id=0x05"]
    assert all("--lsi=1" in c for c in fdp_calls) and fdp_calls[-1][-1] == "--lsp=1"
    assert (tmp_path / "id_ctrl.bin").read_bytes() == raw("nvme-id-ctrl.bin")
    record = facts.as_record("before")
    assert record["files"]["fdp_configs"] == "log-20h_before.bin"
    assert json.loads(json.dumps(record)) == record


def test_a_longer_configurations_log_is_read_again_whole_and_a_refusal_kept(tmp_path):
    """Constructed: a 20h log of one configuration with 120 handles (560 bytes), more than the
    first 512-byte read; the events log refused with QEMU's words for log 00h."""
    config = bytearray(64 + 4 * 120)
    config[0:2] = len(config).to_bytes(2, "little")
    config[2], config[4], config[8:10] = 0x80, 1, (120).to_bytes(2, "little")
    config[64::4] = bytes([2] * 120)
    head = bytearray(16)
    head[4:8] = (16 + len(config)).to_bytes(4, "little")
    run = Recorded(refuse=("--log-id=0x23",),
                   replace={("get-log", "--log-id=0x20"): bytes(head + config)})
    facts = F.Facts()
    F.read_fdp("/dev/nvme0", 1, tmp_path, facts, "t", run=run)
    lengths = [c[4] for c in run.calls if "--log-id=0x20" in c]
    assert lengths == ["--log-len=512", "--log-len=560"]
    assert facts.values["fdp_configs"][0]["ruhts"] == [2] * 120
    assert "does not support it" in facts.refused["fdp_host_events"]
    assert "fdp_host_events" not in facts.values


def test_pci_config_space_and_registers_are_what_lspci_said():
    """The second boot's configuration space and BAR0 (README): what `lspci -vvv` printed of
    the same function, field by field."""
    from pts.tools import pci_facts
    pci = pci_facts.config_space(raw("pci-config.bin"))
    lspci = (FDP / "lspci-vvv.txt").read_text()
    assert pci["capabilities"] == {"MSI-X": 0x40, "PCI Express": 0x80, "Power Management": 0x60}
    assert "[40] MSI-X" in lspci and "[80] Express" in lspci and "[60] Power Management" in lspci
    assert pci["devcap"] & 7 == 0 and "DevCap:\tMaxPayload 128 bytes" in lspci
    assert pci["devcap"] >> 28 & 1 and "FLReset+" in lspci
    assert pci["devcap2"] & 0x1F == 0 and "Completion Timeout: Not Supported, TimeoutDis-" in lspci
    assert pci["msix_table"] & 7 == 0 and "Vector table: BAR=0" in lspci
    assert pci["pmcsr"] >> 3 & 1 and "NoSoftRst+" in lspci and not pci["pmc"] >> 5 & 1
    assert pci["lnkcap"] & 0xF == 1 and "Speed 2.5GT/s, Width x1" in lspci
    assert pci["bars"][0] >> 1 & 3 == 2 and "(64-bit, non-prefetchable) [size=16K]" in lspci
    bars = pci_facts.bar_sizes((FDP / "pci-resource.txt").read_text())
    assert [(b["bytes"], b["mem"], b["io"]) for b in bars][:2] == [(16384, True, False),
                                                                   (0, False, False)]
    regs = pci_facts.registers(raw("nvme-regs-bar0.bin"))
    assert (regs["mqes"], regs["dstrd"], regs["css"], regs["cps"], regs["mpsmin"],
            regs["mpsmax"], regs["cmbs"], regs["vs"]) == (2047, 0, 0b1000001, 0, 0, 4, 0,
                                                          "1.4.0")
    # constructed: the same CAP with CPS 11b (bits 47:46), CMBS (bit 57), CRIMS (bit 60)
    cap = int.from_bytes(raw("nvme-regs-bar0.bin")[:8], "little") | 3 << 46 | 1 << 57 | 1 << 60
    regs = pci_facts.registers(cap.to_bytes(8, "little") + raw("nvme-regs-bar0.bin")[8:])
    assert (regs["cps"], regs["bps"], regs["cmbs"], regs["pmrs"], regs["crims"],
            regs["crwms"]) == (3, 0, 1, 0, 1, 0)
    with pytest.raises(F.FactsError, match="as root"):
        pci_facts.config_space(raw("pci-config.bin")[:64])


def test_read_pci_and_features_from_the_recorded_files(tmp_path):
    """read_pci on a directory laid out as the function's sysfs directory, holding the
    recorded config, resource and link files; no resource0 there, as when the kernel will
    not map BAR0: the registers are named refused. read_features answered from the recorded
    get-feature outputs (0Eh answered, 25h refused by QEMU)."""
    from pts.tools import pci_facts
    dev, out = tmp_path / "0000:00:03.0", tmp_path / "run"
    dev.mkdir(), out.mkdir()
    (dev / "config").write_bytes(raw("pci-config.bin"))
    (dev / "resource").write_text((FDP / "pci-resource.txt").read_text())
    for line in (FDP / "pci-link.txt").read_text().splitlines():
        name, value = line.split(":", 1)
        (dev / name).write_text(value + "\n")
    facts = F.Facts()
    pci_facts.read_pci(dev, out, facts)
    assert facts.values["pci_link"]["max_link_width"] == "1"
    assert facts.values["pci"]["capabilities"]["MSI-X"] == 0x40
    assert (out / "pci-config.bin").read_bytes() == raw("pci-config.bin")
    assert "iomem=relaxed" in facts.refused["nvme_registers"]

    def run(argv, **kwargs):
        fid = argv[3].split("=0x")[1]
        if fid == "0e":                   # SEL 3, and SEL 0 for its value (NVMe-OPT-5)
            name = "current" if "--sel=0" in argv else "capabilities"
            return CommandResult(tuple(argv), 0, (FDP / f"feature-0eh_{name}.txt")
                                 .read_text(), "", 0.1)
        return CommandResult(tuple(argv), 1, "", (FDP / f"feature-{fid}h_capabilities.txt"
                                                  ".stderr.txt").read_text(), 0.1)
    F.read_features("/dev/nvme0", (0x0E, 0x25), facts, run=run)
    assert facts.values["features"]["0Eh"] == {"capabilities": 4, "current": {
        "milliseconds": 1795936990424, "synch": 0, "origin": 1, "bytes": "d8b42f26a2010200"}}
    assert "Invalid Field in Command" in facts.values["features"]["25h"]["refused"]


def test_read_log_support_from_the_recorded_answers(tmp_path):
    """Logs 01h (512 bytes) and 0Dh (refused by QEMU 10, read with LSP 1) as the third boot
    recorded them."""
    calls = []

    def run(argv, stdout_path=None, **kwargs):
        calls.append(list(argv))
        name = f"log-{argv[3].split('=0x')[1]}h_support.bin"
        if (FDP / name).exists():
            stdout_path.write_bytes(raw(name))
            return CommandResult(tuple(argv), 0, "", "", 0.1)
        return CommandResult(tuple(argv), 1, "", (FDP / f"{name}.stderr.txt").read_text(), 0.1)

    facts = F.Facts()
    F.read_log_support("/dev/nvme0", (0x01, 0x0D), tmp_path, facts, run=run)
    assert facts.values["logs"]["01h"] == {"bytes": 512, "file": "log-01h_support.bin"}
    assert "does not support it" in facts.values["logs"]["0Dh"]["refused"]
    assert "--lsp=1" in calls[1] and "--lsp=1" not in calls[0]


def test_read_all_reads_what_the_rules_need(tmp_path):
    """host_read.read_all with the recorded answers (Recorded above; logs the probe did not
    read at 512 bytes answered from the same files): every fact the rules read is there."""
    from pts.stored.host_judge import judge
    from pts.tools import host_read

    class All(Recorded):
        def __call__(self, argv, stdout_path=None, **kwargs):
            if argv[1] == "get-feature" and "--feature-id=0x02" not in argv:
                fid = argv[3].split("=0x")[1]
                name = f"feature-{fid}h_{'current' if '--sel=0' in argv else 'capabilities'}.txt"
                if (FDP / name).exists():
                    return CommandResult(tuple(argv), 0, (FDP / name).read_text(), "", 0.1)
                said = FDP / f"{name}.stderr.txt"    # DSSD C2h-CBh: the stand-in's words
                return CommandResult(tuple(argv), 1, "", said.read_text() if said.exists()
                                     else DSSD_NOT_RECORDED, 0.1)
            if argv[1] == "get-log" and "--lsi=1" not in argv and argv[3] != "--log-id=0x05":
                log = argv[3].split("=0x")[1]
                for name in (f"log-{log}h_support.bin", f"log-{log}h.bin", f"log-{log}h_0.bin"):
                    if (FDP / name).exists():
                        stdout_path.write_bytes(raw(name)[:512])
                        return CommandResult(tuple(argv), 0, "", "", 0.1)
                stderr = next((FDP / f"{n}.stderr.txt").read_text() for n in (
                    f"log-{log}h_support.bin", f"log-{log}h.bin", f"log-{log}h_0.bin",
                    # C1h, C3h-C7h, CAh: the probe saw C3h's refusal, the same word for word
                    # for each (qemu-10/README.md)
                    *(["../nvme-get-log-c3h_refused"]
                      if log in ("c1", "c3", "c4", "c5", "c6", "c7", "ca") else []))
                    if (FDP / f"{n}.stderr.txt").exists())
                return CommandResult(tuple(argv), 1, "", stderr, 0.1)
            return super().__call__(argv, stdout_path=stdout_path, **kwargs)

    run = All()
    facts = host_read.read_all("/dev/nvme0", "/dev/nvme0n1", tmp_path / "host-facts", "before",
                               run=run)
    # log 09h names Endurance Group 1 (the namespace's ENDGID): QEMU refuses LSI 0
    assert [c for c in run.calls if "--log-id=0x09" in c][0][-1] == "--lsi=1"
    got = {v.req_id: v.verdict for v in judge(facts.values)}
    whys = {v.req_id: v.why for v in judge(facts.values)}
    not_read = sorted(r for r, v in got.items() if v == "NOT CHECKED"
                      and "not read in this run" in whys[r])
    # without a PCI directory: the PCI and CAP rules only (PCI-8 and PCI-22 say "CAP, not
    # read" in their own words), and those of the run's own facts ("run": not the drive's,
    # pts.stored.run_facts)
    assert {whys[r].rsplit(": ", 1)[1] for r in not_read} == {
        "pci", "pci_bars", "nvme_registers", "run"}, not_read
    assert all(r.startswith(("PCI-", "NVMe-CFG-", "NVMe-OPT-12")) for r in not_read
               if not whys[r].endswith(": run")), not_read
    assert got["STD-LOG-13"] == "FAIL" and got["FDPSRG-2"] == "FAIL" and got["PWR-1"] == "PASS"
    assert got["EREC-1"] == "FAIL" and got["TEL-6"] == "FAIL"      # C1h, 07h refused
    assert facts.refused == {}
