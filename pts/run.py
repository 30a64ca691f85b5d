"""One run: the device, the effective settings, the run folder with run.json and the ledger,
and the tools, shared by every PTS test of a pytest session."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

import pts
from pts.config.report_info import MISSING_OPERATOR
from pts.config.settings import Settings
from pts.device.identity import BlockDevice
from pts.device.platform import platform_info
from pts.device.platform_device import capture as capture_platform
from pts.device.remote import fio_version, remote_platform, remote_tools
from pts.device.system_facts import capture as capture_system
from pts.results import ledger, records
from pts.results.resume import ResumeState
from pts.tools import atomic, nvme
from pts.tools.fio import Fio, engine_options


class Run:
    def __init__(self, settings: Settings, device: BlockDevice, write: Callable[[str], None],
                 resume: ResumeState | None = None):
        self.settings, self.device, self.write = settings, device, write
        self.spec = settings.spec
        self.resume = resume
        # --power's recorders, [(name, Recorder)], from the first round on
        # (pts.procedure.power_windows); stopped by close()
        self.power: list | None = None
        if resume is None:
            self.folder = ledger.new_run_folder(settings.reports_dir, device.identity.model,
                                                device.identity.serial)
        else:
            self.folder = resume.folder     # run.json stays as written at the start
        self.commands_log = self.folder / "commands.log"
        self.fio = Fio(log_file=self.commands_log, remote=device.remote)
        # --ioengine/--io-poll: every fio run of the run (pts.tools.fio.Fio.placed)
        self.fio.engine = engine_options(settings.ioengine, settings.io_poll)
        if device.remote is not None:       # the I/O runs under the DUT host's fio
            self.fio.engine_version = fio_version(device, self.commands_log)
        self.platform = platform_info() | (
            capture_platform(device.kname, device.transport) if device.remote is None
            else remote_platform(device))
        if self.platform.get("fio_cpu_affinity"):    # > 1 NUMA node: fio on the device's
            self.fio.cpus_allowed = self.platform["fio_cpus"]
        self.deviations = list(settings.deviations())
        if device.emulated:
            self.deviations.insert(0, f"Device is an emulated SSD (profile "
                                      f"{device.profile}), a model, not a drive.")
        if not settings.report_info.operator:
            self.deviations.append(MISSING_OPERATOR)
        if resume is None:
            atomic.write_json(self.folder / "run.json", self._run_json())
        self.ledger = ledger.Ledger(self.folder / "ledger.jsonl")

    def _run_json(self) -> dict:
        spec = self.spec
        return {
            "schema": ledger.SCHEMA,
            "run_id": self.folder.name,
            "started": datetime.now(UTC).isoformat(timespec="seconds"),
            "device": self.device.as_dict(),
            "platform": self.platform,
            # PTS-E 1.0 §5 report fields: what the operator gave, what the DUT's system says
            "report_info": self.settings.report_info.as_dict(),
            "system": capture_system(self.device.kname, self.device.transport,
                                     self.device.host, log_file=self.commands_log),
            "tools": {"snia-pts": pts.__version__, "fio": self.fio.version,
                      "nvme-cli": nvme.version(), "pytest": pytest.__version__,
                      **remote_tools(self.device, self.commands_log)},
            "spec": {"name": spec.name, "title": spec.title, "version": spec.version,
                     "segment": spec.segment, "file": str(spec.path)},
            "options": self.settings.as_dict(),
            # which of them were given (a resumed run takes it back: pts.session.options)
            "options_given": sorted(self.settings.given),
            "deviations": self.deviations,
        }

    def raw_dir(self, test: str, *parts: str) -> Path:
        return self.folder.joinpath("raw", test, *parts)

    def relative(self, path: Path) -> str:
        return str(Path(path).relative_to(self.folder))

    def deviation(self, test: str | None, text: str) -> None:
        self.ledger.append(records.Deviation(test=test, text=text))

    def close(self) -> None:
        for _name, recorder in self.power or ():      # whatever ends the run
            recorder.stop()
        self.ledger.close()
