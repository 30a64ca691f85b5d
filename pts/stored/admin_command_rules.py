"""More OCP admin command set requirements (v2.7 4.4 NVMe-AD-22, -27) that a log's support
decides: the Sanitize Status log (81h) and the LBA Status Information log (0Eh), as
nvme_facts.read_log_support reads them (facts["logs"]["81h"]: the answer, or the drive's words
refusing it; NVMe-AD-31/32, on feature C9h's defaults: pts.stored.dssd_feature_rules);
NVMe-AD-11 from the answer to Identify Controller sent with NSID 1 (nvme_facts.read_stray_nsid),
NVMe-OPT-5 from the Timestamp feature's value (Get Features 0Eh, SEL 0: its Synch bit). Rules
are added to pts.stored.host_rules.RULES; pts.stored.host_judge applies them.

Each is about a log or feature the v2.7 text also asks for (NVMe-AD-7: log 81h; STD-LOG-11:
log 0Eh): refused as not supported (Invalid Field in Command,
Invalid Log Page), FAIL with the refusal as the evidence; answered, the part a field would
decide is NOT CHECKED where the run does not decode it, saying which.
"""

from __future__ import annotations

from pts.stored.host_rules import (
    FAIL,
    NOT_APPLICABLE,
    NOT_CHECKED,
    PASS,
    V27,
    Evidence,
    rule,
)
from pts.tools.ocp_log_read import REFUSALS

GET_LOG = "nvme get-log --log-id=0x{} --log-len=512 --raw-binary"
GET_FEATURE = "nvme get-feature --feature-id=0x{} --sel=3"


def _answer(f: dict, kind: str, key: str) -> tuple[bool | None, Evidence]:
    """True: answered; False: refused as not supported; None: refused otherwise. KeyError
    when the run did not ask."""
    got = (f["logs"] if kind == "log" else f["features"])[key]
    said = got.get("refused")
    if kind == "log":
        ev = Evidence(GET_LOG.format(key[:2].lower()), f"log {key}",
                      f"{got['bytes']} bytes" if "bytes" in got else said[-160:])
    else:
        ev = Evidence(GET_FEATURE.format(key[:2].lower()), "Dword 0 (capabilities)",
                      got.get("capabilities", said and said[-160:]))
    if said is None:
        return True, ev
    return (False if any(r in said for r in REFUSALS) else None), ev


# requirement ID -> (line, "log" or "feature", its key, its name, what an answer leaves open
# ("": the answer decides it: PASS))
SUPPORT = {
    "NVMe-AD-22": (414, "log", "81h", "Sanitize Status log",
                   "its Sanitize Status field as shipped (000b, Global Data Erased 1b): not "
                   "decoded, and a drive a host used may have been sanitized since"),
    "NVMe-AD-27": (436, "log", "0Eh", "LBA Status Information log", ""),
}
# NVMe-AD-31/32 (C9h's defaults) are pts.stored.dssd_feature_rules', which reads them


def _support(kind: str, key: str, name: str, leaves: str):
    def check(f):
        ok, ev = _answer(f, kind, key)
        if ok is False:
            return FAIL, f"{name} ({key}) refused as not supported", (ev,)
        if ok is None:
            return NOT_CHECKED, f"the {name} ({key}) read failed otherwise (evidence)", (ev,)
        if not leaves:
            return PASS, f"{name} ({key}) answered", (ev,)
        return NOT_CHECKED, f"{name} ({key}) answered; {leaves}", (ev,)
    return check


for _rid, (_line, _kind, _key, _name, _leaves) in SUPPORT.items():
    rule(V27, _rid, _line)(_support(_kind, _key, _name, _leaves))


@rule(V27, "NVMe-AD-11", 383)
def ad_11(f):
    got = f["identify_stray_nsid"]
    said, status = got["said"], got["exit_status"]
    ev = (Evidence(got["command"] + ": Identify Controller (CNS 01h uses no NSID) with NSID 1",
                   "completion status (nvme-cli's exit status and words)", (status, said)),)
    if status == 0:
        return FAIL, "completed successfully: not aborted with Invalid Field in Command", ev
    if "Invalid Field in Command" in said:
        return PASS, "aborted with Invalid Field in Command", ev
    if "NVMe status" in said:
        return FAIL, f"aborted with another status: {said[-120:]}", ev
    return NOT_CHECKED, f"the command did not reach the drive: {said[-120:]}", ev


@rule(V27, "NVMe-OPT-5", 687)
def opt_5(f):
    ok, ev = _answer(f, "feature", "0Eh")
    if ok is False:
        return NOT_APPLICABLE, ("no Timestamp feature (0Eh refused; NVMe-OPT-2 asks for it): "
                                "no Synch bit to set"), (ev,)
    if ok is None:
        return NOT_CHECKED, "the Timestamp feature read failed otherwise (evidence)", (ev,)
    cur = f["features"]["0Eh"]["current"]
    if "synch" not in cur:
        said = cur.get("refused") or cur["error"]
        return NOT_CHECKED, f"its value was not read: {said[-120:]}", (ev,)
    ev = (Evidence("nvme get-feature --feature-id=0x0e --sel=0: Timestamp", "byte 6 bit 0 "
                   "(Synch), bits 3:1 (Timestamp Origin)", cur["bytes"]),)
    if cur["synch"]:
        return FAIL, "Synch 1b: the timestamp may have stopped counting", ev
    return PASS, (f"Synch 0b (Timestamp Origin {cur['origin']:03b}b) at the reading; a reading "
                  "shows one moment, not every one"), ev
