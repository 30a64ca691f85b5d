"""Meta's performance-test conditions (OCP Datacenter NVMe SSD v2.7 section 20.2, META-PERF;
v2.0 appendix A.2, FB-PERF) that the run's own facts decide (pts.stored.run_facts, the facts'
"run"): the I/O scheduler the run's device used, the host's kernel, and the configuration the
targets are measured in (default OP, default power state, one SSD, the PCIe link at the
drive's maximum). Rules are added to pts.stored.host_rules.RULES. The targets themselves
(FioSynth, trim rate, IO.go, Fileappend, a timed fill, CacheBench, BootBench) are measured by
Meta's benchmarks, which the suite does not run: their IDs are NOT CHECKED by their class
(pts.config.ocp_id_classes OVERRIDES), saying which.
"""

from __future__ import annotations

import re

from pts.config.pci_layout import LINK_SPEEDS
from pts.stored.host_rules import (
    FAIL,
    FEAT_02,
    ID_CTRL,
    NOT_CHECKED,
    PASS,
    V27,
    Evidence,
    rule,
)

V20 = "2.0"
PLATFORM = "run.json platform"
OPTIONS = "run.json options"
CONFIG = "sysfs config: PCI configuration space"
LINK = "sysfs current_link_speed, current_link_width"
KERNEL_AT_LEAST = (6, 11, 1)       # "Kernel 6.11.1 FBK13 or later" (FBK13: Meta's own build)
NS_MANAGEMENT = 3                  # OACS bit 3


def _scheduler(f: dict, want: str):
    sched = f["run"]["io_scheduler"]
    ev = (Evidence(PLATFORM, "io_scheduler (sysfs /sys/block/DEV/queue/scheduler, the "
                   "active one, at the run's start)", sched),)
    if sched is None:
        return NOT_CHECKED, ("the run recorded no I/O scheduler for its device (a drive on "
                             "another host, or a run from before it was recorded)"), ev
    if sched != want:
        return FAIL, f'the run\'s device used the I/O scheduler "{sched}", not "{want}"', ev
    return PASS, f'the run\'s device used the I/O scheduler "{want}"', ev


rule(V27, "META-PERF-7", 11883)(lambda f: _scheduler(f, "none"))
rule(V20, "FB-PERF-7", 115)(lambda f: _scheduler(f, "kyber"))


def release(text: str) -> tuple[int, int, int] | None:
    """"6.1.0-56-amd64" -> (6, 1, 0); "6.11" -> (6, 11, 0); None when it is not a release."""
    m = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    return (int(m[1]), int(m[2]), int(m[3] or 0)) if m else None


@rule(V27, "META-PERF-10", 11887)
def meta_perf_10(f):
    run = f["run"]
    kernel, engine = run["kernel"], run["ioengine"]
    ev = (Evidence(PLATFORM, "kernel (the host's release, uname -r, at the run's start)",
                   kernel or None),
          Evidence(OPTIONS, "ioengine (fio's engine of the run)", engine))
    found = release(kernel)
    if found is None:
        return NOT_CHECKED, (f"the run recorded no kernel release it could read "
                             f"({kernel!r})"), ev
    want = ".".join(map(str, KERNEL_AT_LEAST))
    used = f"; the run's fio engine: {engine}"
    if found < KERNEL_AT_LEAST:
        return FAIL, f"kernel {kernel} is older than {want}{used}", ev
    return PASS, (f"kernel {kernel}: {want} or later, with io_uring (FBK13, Meta's build, "
                  f"is not told apart: the upstream release is compared){used}"), ev


def _op(f: dict):
    c = f["id_ctrl"]
    ev = Evidence(ID_CTRL, "TNVMCAP (bytes 295:280), UNVMCAP (bytes 311:296), OACS (byte "
                  "256) bit 3", (int(c["tnvmcap"]), int(c["unvmcap"]), f"0x{c['oacs']:x}"))
    total, unallocated = int(c["tnvmcap"]), int(c["unvmcap"])
    if total:
        if unallocated:
            return False, (f"not the default OP: {unallocated:,} of {total:,} bytes of NVM "
                           "capacity left out of the namespaces (UNVMCAP)"), ev
        return True, "default OP (UNVMCAP 0: the whole NVM capacity in namespaces)", ev
    if not c["oacs"] >> NS_MANAGEMENT & 1:
        return True, ("default OP (no Namespace Management: the host cannot change the "
                      "user capacity)"), ev
    return None, ("OP (TNVMCAP 0 with Namespace Management: the capacity left out of the "
                  "namespaces is not reported)"), ev


def _power_state(f: dict):
    current = f["feature_02h"] & 0x1F
    if "feature_02h_default" not in f:
        return None, "the default power state (Get Features 02h SEL 1 not read)", \
            Evidence(FEAT_02 + " -s 0 (current)", "Dword 0 bits 4:0 (PS)", current)
    default = f["feature_02h_default"] & 0x1F
    ev = Evidence(FEAT_02 + " -s 0 (current), -s 1 (default)", "Dword 0 bits 4:0 (PS)",
                  (current, default))
    if current != default:
        return False, f"power state {current} in use, not the default {default}", ev
    return True, f"the default power state ({default}) in use", ev


def _one_ssd(f: dict):
    run = f["run"]
    ev = Evidence("pts.stored.run_facts", "devices (drives in the run's session)",
                  run["devices"] if run["devices_recorded"] else None)
    if run["devices"] > 1:
        return False, f"{run['devices']} SSDs in the session, not one", ev
    if not run["devices_recorded"]:
        return None, "one SSD (a run does not record how many drives its session ran)", ev
    return True, "one SSD", ev


def _link(f: dict):
    cap, link = f["pci"]["lnkcap"], f["pci_link"]
    top_speed, top_width = LINK_SPEEDS.get(cap & 0xF), cap >> 4 & 0x3F
    speed = re.match(r"[\d.]+", link.get("current_link_speed", ""))
    width = link.get("current_link_width", "")
    ev = Evidence(f"{CONFIG}; {LINK}", "Link Capabilities bits 3:0 (Max Link Speed), 9:4 "
                  "(Max Link Width); the current link", (f"0x{cap:x}", link.get(
                      "current_link_speed"), width))
    if top_speed is None or not speed or not width.isdigit():
        return None, "the PCIe link (its speed or width not readable)", ev
    now, most = f"{float(speed[0]):g} GT/s x{width}", f"{top_speed:g} GT/s x{top_width}"
    if float(speed[0]) < top_speed or int(width) < top_width:
        return False, f"PCIe link at {now}, below the drive's {most}", ev
    return True, f"PCIe link at the drive's maximum, {most}", ev


@rule(V27, "META-PERF-12", 11895)
def meta_perf_12(f):
    parts = []
    for part, name in ((_op, "OP"), (_power_state, "the power state"), (_one_ssd, "one SSD"),
                       (_link, "the PCIe link")):
        try:
            parts.append(part(f))
        except KeyError as missing:
            if missing.args[0] == "run":
                raise
            parts.append((None, f"{name} (not read in this run: {missing.args[0]})", None))
    ev = tuple(e for _, _, e in parts if e is not None)
    bad = [why for ok, why, _ in parts if ok is False]
    good = [why for ok, why, _ in parts if ok]
    unknown = [why for ok, why, _ in parts if ok is None]
    left = "; not judged: " + "; ".join(unknown) if unknown else ""
    if bad:
        return FAIL, "; ".join(bad) + left, ev
    if not good:
        return NOT_CHECKED, "not judged: " + "; ".join(unknown), ev
    return PASS, "; ".join(good) + left, ev
