"""What the suite makes of each OCP Datacenter NVMe SSD requirement ID it does not tabulate
(issue 49 §2): a class and the reason the report shows, by group, with per-ID exceptions where
the text says otherwise. The IDs themselves, one row per (version, ID), are
pts/config/ocp_ids.tsv (generated from the texts); pts.config.ocp_all_ids joins the two.

Classes (CLASSES):
  TABULATED       a row of pts.config.ocp_requirements.TABLE judges it (its verdict is that
                  row's: PASS, FAIL or NOT CHECKED with the row's own reason);
  TO_BE_JUDGED    a group the suite is being taught to judge from what it runs or reads
                  (issue 49 §3: power states, command and feature support, FDP, self-test,
                  telemetry, standard logs, error recovery, thermal throttling, latency
                  monitor, PCIe link, performance targets); until a check gives the ID a
                  verdict, it is NOT CHECKED, "not yet judged";
  NOT_APPLICABLE  it requires nothing of this drive: obsolete in this version, or it applies
                  to another form factor than the drive's (`form_factor`: the verdict knows
                  the drive's at run time; for a drive of that form factor, or one whose form
                  factor is not known, it is NOT CHECKED for REASONS["inspect"]);
  NOT_CHECKED     what it needs is beyond a host with nvme-cli and fio; `reason` says what.
Reasons and group subjects are this project's words.
"""

from __future__ import annotations

TABULATED, TO_BE_JUDGED = "TABULATED", "TO BE JUDGED"
NOT_APPLICABLE, NOT_CHECKED = "NOT APPLICABLE", "NOT CHECKED"
CLASSES = (TABULATED, TO_BE_JUDGED, NOT_APPLICABLE, NOT_CHECKED)

REASONS = {
    "tabulated": "judged by the suite's requirement table",
    "to be judged": "a group the suite judges from what it runs or reads (issue 49 §3); "
                    "not yet judged",
    "obsolete": "obsolete in this version of the text: it requires nothing",
    "form factor": "applies only to {form_factor} drives",
    "power": "needs a power cycle, a power loss or a reset, which the suite never causes",
    "meter": "needs a power meter on the drive's supply rails",
    "analyser": "needs a PCIe protocol analyser or signal test equipment, or PCIe errors "
                "injected on the link",
    "boot": "about the host platform booting from the drive (UEFI, option ROM), which a "
            "running host does not exercise",
    "inspect": "needs the drive in hand: physical inspection or measurement (mechanics, "
               "connector, LED, label)",
    "audit": "a vendor process, disclosure or documentation requirement: shown by the "
             "vendor's documents, not measured on a drive",
    "lab": "needs an environmental lab (temperature chamber, altitude, shock and vibration, "
           "ESD, EMC)",
    "life": "needs the drive's rated life, months of retention or a population of drives: "
            "far longer than any run",
    "oob": "needs the out-of-band management path (SMBus/I2C, MCTP, NVMe-MI), which the "
           "suite does not use",
    "security": "needs TCG or SPDM security sessions with the drive's credentials; the "
                "suite sends no security protocol commands",
    "firmware": "needs firmware images from the vendor (update, rollback, signed and "
                "unsigned images)",
    "inject": "needs faults or errors made inside the drive (event injection, panics, "
              "internal data corruption), which the suite never causes",
    "factory": "about the drive as shipped from the factory, before any host used it",
    "telemetry data": "needs the telemetry data area parsed (statistics, event FIFOs, "
                      "vendor strings); the suite has no parser for it",
    "not run": "a host could check it, but the suite does not yet send the commands or "
               "read the log fields it needs",
    "features": "a DSSD Set/Get Features field (C0h-CBh) the suite does not send or read",
    "set features": "a DSSD Set Features command's field or behaviour (C2h-CBh): the suite "
                    "sends no Set Features, which would change the drive's configuration",
    "customer": "one hyperscaler's own configuration: it applies only to drives built for "
                "that customer, which a drive does not report",
    "host tool": "about the nvme-cli OCP plugin on the host, not about the drive",
    "benchmark": "a target of Meta's own benchmarks (FioSynth Flash workloads and trim jobs, "
                 "IO.go, Fileappend, a timed single-threaded fill, CacheBench, BootBench), "
                 "which the suite does not run",
}

# Form factors a group applies to alone (section 10.4-10.9 of v2.7, 9.4-9.8 of v2.0)
FORM_FACTORS = ("M.2", "E1.S", "E1.L", "E3", "U.2/U.3", "E2")
FORM_FACTOR_OF = {"FFM2": "M.2", "FFE1S": "E1.S", "FFE1L": "E1.L", "FFE3": "E3",
                  "FF8639": "U.2/U.3", "FFE2": "E2"}

# Groups a TABLE row judges, and groups issue 49 §3 makes checkable (FB-PERF: v2.0's name
# for META-PERF's performance targets)
TABULATED_GROUPS = ("SMART", "SLOG", "STD-LOG", "CTO", "TRIM", "NUSE", "ENDUD", "LMLOG")
JUDGED_GROUPS = ("PWR", "NVMe-AD", "NVMe-IO", "NVMe-OPT", "NVMe-CFG", "FDPG", "FDPSRG",
                 "FDPSRG2", "FDPDP", "SELFTST", "TEL", "STD-LOG", "EREC", "TTHROTTLE",
                 "LMLOG", "PCI", "META-PERF", "FB-PERF")

# Every other group of both texts: (what it is about, the reason key of its IDs)
GROUPS = {
    "NVMe": ("NVMe base specification compliance", "not run"),
    "NVMeR": ("subsystem and controller resets", "power"),
    "NSM": ("namespace management and attachment", "not run"),
    "UUID": ("the DSSD UUID in the UUID list", "not run"),
    "DSSD-AEN": ("DSSD asynchronous events", "not run"),
    "TCGHST-PE": ("TCG activity events in the persistent event log", "security"),
    "TCGCE": ("TCG activity event format", "security"),
    "TCG-AUTHM": ("TCG activity event: authentication", "security"),
    "TCG-ACT": ("TCG activity event: activate", "security"),
    "TCG-RACT": ("TCG activity event: reactivate", "security"),
    "TCG-ASGN": ("TCG activity event: assign", "security"),
    "TCG-BSID": ("TCG activity event: block SID", "security"),
    "GLP-ACC": ("access to the DSSD log pages", "not run"),
    "EREC-AEN": ("asynchronous event on a panic", "inject"),
    "EREC-FUNC": ("error recovery behaviour on a panic", "inject"),
    "TELRI": ("telemetry reason identifier", "telemetry data"),
    "LMDATA": ("latency monitor log (C3h) fields", "not run"),
    "DCLP": ("device capabilities log (C4h) fields", "not run"),
    "DSSDPSD": ("DSSD power state descriptors in C4h", "not run"),
    "URLP": ("unsupported requirements log (C5h) fields", "not run"),
    "HWCOMP": ("hardware component log (C6h)", "not run"),
    "COMPD": ("hardware component descriptors", "not run"),
    "CITYPE": ("hardware component types", "not run"),
    "HWCLOG": ("hardware component log header", "not run"),
    "TCGL": ("TCG configuration log (C7h) fields", "security"),
    "TELSLG": ("telemetry string log (C9h)", "telemetry data"),
    "TELSTR-LOG": ("telemetry string log header", "telemetry data"),
    "STR-ID": ("telemetry strings: statistic identifiers", "telemetry data"),
    "STR-EV": ("telemetry strings: events", "telemetry data"),
    "STR-VUEV": ("telemetry strings: vendor events", "telemetry data"),
    "STATF": ("telemetry statistics format", "telemetry data"),
    "STATI": ("telemetry statistic identifiers", "telemetry data"),
    "STAT-CSD": ("telemetry context statistic descriptor", "telemetry data"),
    "CTX-NS": ("telemetry context: namespace", "telemetry data"),
    "CTX-CTLR": ("telemetry context: controller", "telemetry data"),
    "CTX-QUEUE": ("telemetry context: queue", "telemetry data"),
    "SDL": ("telemetry statistic descriptor location", "telemetry data"),
    "EVENTD": ("telemetry event descriptor", "telemetry data"),
    "EVF": ("telemetry event FIFO", "telemetry data"),
    "EVC-TS": ("telemetry event: timestamp", "telemetry data"),
    "EVC-PCI": ("telemetry event: PCIe", "telemetry data"),
    "EVC-NVME": ("telemetry event: NVMe", "telemetry data"),
    "EVC-RST": ("telemetry event: reset", "telemetry data"),
    "EVC-BS": ("telemetry event: boot sequence", "telemetry data"),
    "EVC-ASRT": ("telemetry event: firmware assert", "telemetry data"),
    "EVC-TEMP": ("telemetry event: temperature", "telemetry data"),
    "EVC-MEDIA": ("telemetry event: media", "telemetry data"),
    "EVC-WEAR": ("telemetry event: media wear", "telemetry data"),
    "EVC-SNP": ("telemetry event: statistic snapshot", "telemetry data"),
    "EVC-VF": ("telemetry event: virtual FIFO", "telemetry data"),
    "EVC-SMBUS": ("telemetry event: SMBus", "telemetry data"),
    "EVC-MCTP": ("telemetry event: MCTP", "telemetry data"),
    "EVC-VU": ("telemetry event: vendor unique", "telemetry data"),
    "TELDF": ("telemetry data area format", "telemetry data"),
    "FWUP": ("firmware update", "firmware"),
    "FWHST-LOG": ("firmware activation history log", "not run"),
    "FAHL": ("firmware activation history log header", "not run"),
    "FAHE": ("firmware activation history entries", "not run"),
    "CFUH": ("clear firmware update history feature", "features"),
    "FDEF": ("factory defaults", "factory"),
    "SECTOR": ("sector sizes and namespaces", "not run"),
    "GETF": ("Set/Get Features in general", "not run"),
    "SERRI": ("event injection: Set Features C0h", "inject"),
    "ERRI": ("event injection behaviour", "inject"),
    "ERRIE": ("event injection entries", "inject"),
    "EVTREC": ("event injection records", "inject"),
    "EVTDEF": ("event injection event types", "inject"),
    "ERRIEDP": ("event injection data", "inject"),
    "GERRI": ("event injection: Get Features C0h", "inject"),
    "ROWTM": ("PLP failure mode behaviour", "power"),
    "SROWTM": ("PLP failure mode: Set Features C2h", "set features"),
    "GROWTM": ("PLP failure mode: Get Features C2h", "features"),
    "CPCIE": ("clear PCIe correctable errors: Set Features C3h", "set features"),
    "GPCIE": ("clear PCIe correctable errors: Get Features C3h", "features"),
    "S1667": ("IEEE 1667 silo: Set Features C4h", "set features"),
    "G1667": ("IEEE 1667 silo: Get Features C4h", "features"),
    "LMSF": ("latency monitor: Set Features C5h", "features"),
    "LMDS": ("latency monitor configuration fields", "features"),
    "LMGF": ("latency monitor: Get Features C5h", "features"),
    "SPLPI": ("PLP health check interval: Set Features C6h", "set features"),
    "GPLPI": ("PLP health check interval: Get Features C6h", "features"),
    "DSSDPSS": ("DSSD power state: Set Features C7h", "set features"),
    "SDSSDPS": ("DSSD power state: Set Features C7h fields", "set features"),
    "DSSDPSG": ("DSSD power state: Get Features C7h", "features"),
    "GDSSDPS": ("DSSD power state: Get Features C7h fields", "features"),
    "TEL-CFG-SF": ("telemetry profile: Set Features C8h", "set features"),
    "TEL-CFG-GF": ("telemetry profile: Get Features C8h", "features"),
    "SDAEC": ("DSSD async event configuration: Set Features C9h", "set features"),
    "GDAEC": ("DSSD async event configuration: Get Features C9h", "features"),
    "SIDLE": ("idle wake up time: Set Features CAh", "set features"),
    "GIDLE": ("idle wake up time: Get Features CAh", "features"),
    "MPCS": ("max PCIe interface: Set Features CBh", "set features"),
    "MPCSG": ("max PCIe interface: Get Features CBh", "features"),
    "BOOT": ("booting from the drive", "boot"),
    "PCIERR": ("PCIe error logging", "analyser"),
    "LPWR": ("PCIe low power modes", "analyser"),
    "EYE": ("PCIe eye capture", "analyser"),
    "DIX": ("DIX (protection information with separate metadata)", "not run"),
    "DIF": ("DIF (protection information in the data)", "not run"),
    "UBER": ("uncorrectable bit error rate", "life"),
    "TTR": ("time to ready and shutdown", "power"),
    "INCS": ("incomplete or unsafe shutdown", "power"),
    "E2E": ("end to end internal data protection", "inject"),
    "CRASH": ("behaviour on a firmware crash or assert", "inject"),
    "REL": ("annual failure rate", "life"),
    "BKGND": ("background data refresh", "life"),
    "WRL": ("wear levelling", "life"),
    "PLP": ("power loss protection", "power"),
    "DEVLMT": ("no architectural limits on events", "life"),
    "RETC": ("retention conditions", "life"),
    "SLIFE": ("shelf life", "life"),
    "EOL": ("end of life behaviour", "life"),
    "THERM": ("data centre altitude", "lab"),
    "TRPT": ("temperature reporting", "not run"),
    "THRMS": ("thermal shutdown", "lab"),
    "GFF": ("all form factors: mechanics and LED", "inspect"),
    "PCM": ("power consumption measurement", "meter"),
    "SMBUS": ("NVMe basic management command (SMBus)", "oob"),
    "NVMe-MI": ("NVMe management interface", "oob"),
    "FRU": ("vital product data (FRU)", "oob"),
    "SBT": ("secure boot", "security"),
    "SEC": ("basic security", "security"),
    "SPDM": ("SPDM", "security"),
    "CERT": ("SPDM certificates", "security"),
    "SFM": ("SPDM firmware measurements", "security"),
    "DATAE": ("data encryption and eradication", "security"),
    "TCG-FEATURE": ("TCG version and features", "security"),
    "TCG-COMM": ("TCG communication layer", "security"),
    "TCG-SES": ("TCG session layer", "security"),
    "TCG-TRAN": ("TCG transactions", "security"),
    "TCG-AUTH": ("TCG authentication", "security"),
    "TCG-CRYPTO": ("TCG crypto", "security"),
    "TCG-LOCKING": ("TCG locking security provider", "security"),
    "TCG-PSID": ("TCG PSID feature set", "security"),
    "DP-CFG": ("device profiles", "factory"),
    "LABL": ("labelling", "inspect"),
    "ROHS": ("RoHS compliance", "audit"),
    "ESD": ("ESD compliance", "lab"),
    "EMC": ("EMC compliance", "lab"),
    "SV": ("shock and vibration", "lab"),
    "SUS": ("sustainability", "audit"),
    "UTIL": ("tested with nvme-cli's OCP plugin", "audit"),
    "UTIL-PI": ("nvme-cli plugin functions", "host tool"),
    "UTIL-NM": ("nvme-cli plugin command names", "host tool"),
    "UTIL-FWHST": ("nvme-cli plugin firmware activation history", "host tool"),
    "META-CONF": ("Meta's configuration", "customer"),
    "FB-CONF": ("Facebook's configuration", "customer"),
    "MS-CONF": ("Microsoft's configuration", "customer"),
}
# Subjects of the form-factor groups and the judged/tabulated ones (their reason is their
# class's)
SUBJECTS = {
    "FFM2": "M.2 form factor", "FFE1S": "E1.S form factor", "FFE1L": "E1.L form factor",
    "FFE3": "E3 form factor", "FF8639": "U.2/U.3 (SFF-8639) form factor",
    "FFE2": "E2 form factor", "SMART": "SMART / Health extended log (C0h)",
    "SLOG": "SMART / Health log", "STD-LOG": "standard log pages", "CTO": "command timeouts",
    "TRIM": "deallocation", "NUSE": "namespace utilisation", "ENDUD": "endurance data",
    "LMLOG": "latency monitor", "PWR": "power levels", "NVMe-AD": "admin commands",
    "NVMe-IO": "I/O commands", "NVMe-OPT": "optional NVMe features",
    "NVMe-CFG": "controller configuration", "FDPG": "flexible data placement",
    "FDPSRG": "FDP single reclaim group configuration 1",
    "FDPSRG2": "FDP single reclaim group configuration 2",
    "FDPDP": "FDP die placement configuration", "SELFTST": "device self-test",
    "TEL": "host and controller initiated telemetry", "EREC": "error recovery log (C1h)",
    "TTHROTTLE": "thermal throttling", "PCI": "PCIe interface",
    "META-PERF": "Meta's performance targets", "FB-PERF": "Facebook's performance targets",
}

# Per-ID exceptions where the text says otherwise than the group: (version, ID) -> a reason
# key, or the one form factor the ID applies to. The last ID of a range the text makes
# obsolete ("UTIL-PI-1 Obsolete ... through UTIL-PI-7", v2.7 lines 11587-11589; alike for
# UTIL-NM, UTIL-FWHST) stands on a line of its own, with no word of it there.
_BOTH = {
    "NVMe-2": "audit", "NVMe-3": "audit",         # features disclosed to the customer
    "GFF-1": "analyser", "GFF-3": "analyser", "GFF-4": "analyser",  # PCIe compliance, lanes
    "GFF-2": "audit", "GFF-6": "audit",           # a compliance report, a CAD file
    "GFF-5": "power",                             # hot swap
    "TRPT-2": "lab", "TRPT-3": "lab",             # sensor accuracy across and within drives
    "TRPT-4": "audit",                            # the composite temperature's equation
    "DP-CFG-3": "life",                           # retention time
    "DP-CFG-4": "oob",                            # NVMe basic management command
    "DP-CFG-5": "M.2",                            # the M.2 top side height
    "DP-CFG-6": "features",                       # PLP failure mode's default
    "DP-CFG-7": "not run",                        # Write Uncorrectable support
    "DP-CFG-8": "power", "DP-CFG-9": "power", "DP-CFG-10": "power",   # time to ready
}
# v2.7's IDs of the judged groups that no host rule can judge (issue 49 §3; their IDs were
# renumbered since v2.0, so v2.7 alone): what each needs instead
_V27 = {
    "NVMe-CFG-3": "inject", "NVMe-AD-19": "inject", "NVMe-AD-25": "inject",   # a fatal status,
    "TTHROTTLE-4": "inject",                          # checksum errors, events, sensor glitches
    "NVMe-CFG-6": "power",          # the queues a controller offers: Set Features 07h at reset
    "NVMe-AD-30": "power", "NVMe-OPT-4": "power", "PCI-5": "power", "PCI-33": "power",
    "PCI-34": "power", "PCI-39": "power",
    "NVMe-CFG-22": "analyser", "NVMe-CFG-23": "analyser", "PCI-15": "analyser",  # on the link
    "PCI-16": "analyser", "PCI-36": "analyser", "PCI-40": "analyser",
    "NVMe-CFG-24": "not run", "NVMe-AD-8": "not run", "NVMe-AD-21": "not run",
    "NVMe-OPT-14": "not run",
    "NVMe-OPT-20": "not run", "NVMe-OPT-22": "not run", "PCI-23": "not run",
    "PCI-24": "not run",
    "SELFTST-9": "audit", "TEL-2": "audit", "TEL-9": "audit", "PCI-3": "audit",
    "PCI-12": "audit", "TTHROTTLE-12": "audit",
    **dict.fromkeys(("PCI-27", "PCI-29", "PCI-30", "PCI-31", "PCI-32", "PCI-37", "PCI-38",
                     "PCI-41"), "oob"),                # MCTP over PCIe VDM
    **dict.fromkeys((f"TTHROTTLE-{n}" for n in (1, 2, 3, 5, 6, 7, 8, 11, 13, 14)), "lab"),
}
# META-PERF (v2.7) and FB-PERF (v2.0): the benchmarks' targets; the conditions the runs are
# made in (scheduler, kernel, configuration) are pts.stored.meta_perf_rules'
OVERRIDES = {
    **{(v, rid): key for v in ("2.0", "2.7") for rid, key in _BOTH.items()},
    **{("2.7", f"META-PERF-{n}"): "benchmark" for n in (1, 2, 3, 4, 5, 6, 9)},
    **{("2.0", f"FB-PERF-{n}"): "benchmark" for n in (1, 2, 3, 4, 5, 6)},
    ("2.7", "META-PERF-11"): "audit",             # performance data provided to Meta
    ("2.0", "FB-PERF-8"): "meter",                # W while meeting the targets
    **{("2.7", rid): key for rid, key in _V27.items()},
    ("2.7", "UTIL-PI-7"): "obsolete", ("2.7", "UTIL-NM-10"): "obsolete",
    ("2.7", "UTIL-FWHST-15"): "obsolete",
}
