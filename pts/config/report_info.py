"""The report fields a person gives (PTS-E 1.0 §5, common reporting requirements): the Test
Operator, an Auditor where there is one, the Test Sponsor, and the facts the system or the
drive may not tell (form factor, media type, system make/model, motherboard, ...).

Given as `--operator`, `--auditor`, `--sponsor` and/or `--report-info FILE.toml`; a value
on the command line wins over the same key in the file. A file that cannot be used (missing,
not TOML, a key this version does not know, a value that is not text) is a ReportInfoError
naming the file, the key and the fix, raised while the options are checked: before anything
is written to a device.
"""

from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path

# The keys of --report-info, each with what it is (the --help text and the error list them).
KEYS = {
    "operator": "the Test Operator, the person who runs the test (required by PTS-E 1.0 §5)",
    "auditor": "the Auditor, where there is one",
    "sponsor": "the Test Sponsor, the organisation the test is run for",
    "system_make": "test system manufacturer, for a system whose DMI sys_vendor is blank",
    "system_model": "test system model, for a blank DMI product_name",
    "motherboard": "motherboard, for a blank DMI board_vendor/board_name",
    "host_adapter": "the DUT's host adapter, where the PCI tree does not name one",
    "interface": "DUT interface and speed, where sysfs does not tell",
    "form_factor": "DUT form factor, e.g. U.2 2.5 inch 15 mm, M.2 2280",
    "media_type": "DUT media type, e.g. 3D TLC NAND",
    "notable_features": "notable features of the DUT (optional)",
}


# PTS-E 1.0 §5: the report names the Test Operator. A report without one is not the report
# the specification asks for: a run started without it declares a deviation (run.json).
MISSING_OPERATOR = ("No Test Operator named: PTS-E 1.0 §5 requires the Test Operator's name "
                    "on the report (give --operator NAME, or operator in --report-info FILE).")


class ReportInfoError(ValueError):
    """--report-info (or a report option) cannot be used; the message names file, key, fix."""


@dataclass(frozen=True)
class ReportInfo:
    operator: str | None = None
    auditor: str | None = None
    sponsor: str | None = None
    system_make: str | None = None
    system_model: str | None = None
    motherboard: str | None = None
    host_adapter: str | None = None
    interface: str | None = None
    form_factor: str | None = None
    media_type: str | None = None
    notable_features: str | None = None
    file: str | None = None           # the --report-info file, absolute (None: none given)

    def as_dict(self) -> dict:
        """run.json `report_info` (docs/results-format.md)."""
        return asdict(self)


def load_file(path: str | Path) -> dict[str, str]:
    """The fields of a --report-info TOML file (top-level `key = "text"` lines)."""
    where = f"--report-info {path}"
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise ReportInfoError(f"{where}: cannot read it ({exc.strerror or exc}); give a "
                              "readable TOML file, e.g. operator = \"A. Tester\"") from None
    except tomllib.TOMLDecodeError as exc:
        raise ReportInfoError(f"{where}: not valid TOML ({exc}); write one `key = \"text\"` "
                              "per line, e.g. operator = \"A. Tester\"") from None
    out = {}
    for key, value in data.items():
        if key not in KEYS:
            raise ReportInfoError(f"{where}: unknown key {key!r}; the keys are "
                                  f"{', '.join(KEYS)} (pytest --help, --report-info)")
        if not isinstance(value, str) or not value.strip():
            raise ReportInfoError(f"{where}: key {key!r} must be non-empty text in quotes, "
                                  f"e.g. {key} = \"...\" (got {value!r})")
        out[key] = value.strip()
    return out


def make_report_info(*, operator: str | None = None, auditor: str | None = None,
                     sponsor: str | None = None, file: str | Path | None = None) -> ReportInfo:
    """The report fields: the file's, then the command line's over them."""
    values = load_file(file) if file else {}
    for option, value in (("operator", operator), ("auditor", auditor), ("sponsor", sponsor)):
        if value is not None and not value.strip():
            raise ReportInfoError(f"--{option} is empty: give a name, e.g. --{option} "
                                  "\"A. Tester\", or leave the option out")
        if value is not None:
            values[option] = value.strip()
    return ReportInfo(**values, file=str(Path(file).resolve()) if file else None)
