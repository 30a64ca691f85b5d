"""Every rule that judges an OCP requirement from the facts a host reads (Identify, features,
logs, PCI configuration space, controller registers), in one place: importing the rule
modules fills pts.stored.host_rules.RULES (keyed by (version, ID)); `judge` applies them all.
The one entry for the verdict code (qualify --ocp) and the run's report of its facts.
"""

from __future__ import annotations

from pts.stored import (
    admin_command_rules,
    command_support_rules,
    dssd_feature_rules,
    error_recovery_rules,
    fdp_rules,
    form_factor_rules,
    identify_rules,
    latency_monitor_rules,
    log_rules,
    meta_perf_rules,
    namespace_uuid_rules,
    ocp_component_rules,
    ocp_page_rules,
    pci_capability_rules,
    pci_rules,
    power_rules,
    self_test_rules,
    telemetry_rules,
    thermal_rules,
)
from pts.stored.host_rules import RULES, Verdict
from pts.stored.host_rules import judge as _judge_with

MODULES = (fdp_rules, identify_rules, log_rules, pci_rules,     # imported for their rules
           telemetry_rules, self_test_rules, thermal_rules, error_recovery_rules,
           command_support_rules, pci_capability_rules, power_rules, admin_command_rules,
           form_factor_rules, meta_perf_rules, ocp_page_rules, ocp_component_rules,
           namespace_uuid_rules,
           latency_monitor_rules, dssd_feature_rules)


def judge(facts: dict, version: str = "2.7") -> list[Verdict]:
    """The verdicts of every host rule of `version` on `facts` (nvme_facts.Facts.values, with
    `rated_watts` when the drive's rated power envelope is known), sorted by ID."""
    return _judge_with(facts, version, RULES)


def ids(version: str = "2.7") -> list[str]:
    """The requirement IDs of `version` a host rule judges."""
    return sorted(rid for ver, rid in RULES if ver == version)


__all__ = ["MODULES", "RULES", "Verdict", "ids", "judge"]
