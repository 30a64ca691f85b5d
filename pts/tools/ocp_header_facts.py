"""The headers of the OCP log pages C7h (TCG Configuration), C9h (Telemetry String) and CAh
(Latency Monitor Debug Telemetry), once at a test's start (pts.tools.host_read.read_all),
read-only, into facts.values["ocp_pages"] in pts.tools.ocp_page_facts' form (answered:
`bytes`, `version`, `guid`, `decoded`, `reserved`; refused: nvme-cli's status text): C7h
read whole (512 bytes, `nvme get-log --log-id=0xc7 --log-len=512 --raw-binary`); C9h NOT
read again: its first 512 bytes are the ones the support read of log C9h kept
(facts.values["logs"]["C9h"], nvme_facts.read_log_support); CAh's first 512 bytes, of which
byte 0 (`lid`) and byte 380 (`scope`) are kept. Layouts: pts.config.ocp_log_headers.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pts.config.ocp_log_headers import C7, C9, CA_LID_AT, CA_SCOPE_AT, CA_SIZE
from pts.tools import commands
from pts.tools.nvme_json import NvmeError
from pts.tools.ocp_log_read import PACKAGE, OcpLogNotSupported, get_log_argv, read_bytes
from pts.tools.ocp_page_facts import KEY, page_fact, status_text


def _read(ctrl: str, log_id: int, size: int, folder: Path, run: Callable,
          log_file: Path | None) -> tuple[bytes | None, dict]:
    seen: list = []

    def call(argv, **kw):
        seen.append(result := run(argv, **kw))
        return result
    path = folder / f"log-{log_id:02x}h.bin"
    argv = " ".join(get_log_argv(ctrl, log_id, size))
    try:
        data = read_bytes(ctrl, log_id, size, path, run=call, log_file=log_file)
    except OcpLogNotSupported:
        said = f"{seen[-1].stderr} {seen[-1].stdout}".strip()
        return None, {"command": argv, "exit": seen[-1].returncode,
                      "refused": status_text(said), "said": said[-200:]}
    except NvmeError as exc:
        return None, {"command": argv, "exit": seen[-1].returncode if seen else None,
                      "error": str(exc)}
    return data, {"command": argv, "exit": 0, "file": path.name}


def _c9(folder: Path, support: dict | None) -> dict:
    """C9h from the support read's answer (no second read)."""
    if support is None:
        return {"error": "log C9h's support read was not made"}
    if "refused" in support:
        return {"command": "the support read of log C9h (nvme_facts.read_log_support)",
                "refused": status_text(support["refused"]), "said": support["refused"][-200:]}
    data = (folder / support["file"]).read_bytes()
    return {"command": "the support read of log C9h (nvme_facts.read_log_support)",
            "exit": 0, "file": support["file"], **page_fact(C9, data)}


def read_headers(ctrl: str, folder: Path, facts, *, run: Callable | None = None,
                 log_file: Path | None = None) -> None:
    if run is None:
        commands.require("nvme", PACKAGE)
        run = commands.run
    out = facts.values.setdefault(KEY, {})
    data, fact = _read(ctrl, C7.log_id, C7.sizes[3], folder, run, log_file)
    out["C7h"] = fact if data is None else {**fact, **page_fact(C7, data)}
    out["C9h"] = _c9(folder, facts.values.get("logs", {}).get("C9h"))
    data, fact = _read(ctrl, 0xCA, CA_SIZE, folder, run, log_file)
    out["CAh"] = fact if data is None else {**fact, "bytes": len(data),
                                            "lid": data[CA_LID_AT], "scope": data[CA_SCOPE_AT]}
