"""The test platform, as the report header lists it (PTS 2.0.2 §5 common reporting)."""

from __future__ import annotations

import os
import platform
import socket
from pathlib import Path


def _first(path: str, prefix: str) -> str:
    try:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.startswith(prefix):
                return line.split(":", 1)[1].strip() if ":" in line else line.split("=", 1)[1]
    except OSError:
        pass
    return "unknown"


def platform_info() -> dict:
    mem_kib = _first("/proc/meminfo", "MemTotal").split()[0]
    return {
        "hostname": socket.gethostname(),
        "os": _first("/etc/os-release", "PRETTY_NAME=").strip('"'),
        "kernel": platform.release(),
        "cpu": _first("/proc/cpuinfo", "model name"),
        "cpus": os.cpu_count(),
        "memory_bytes": int(mem_kib) * 1024 if mem_kib.isdigit() else None,
        "python": platform.python_version(),
    }
