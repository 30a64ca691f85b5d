"""ATA (hdparm) and SCSI (sg3_utils, sdparm) purge and write cache, run against the fake command
runner (tests.support.helpers.RecordedRunner) fed with recorded tool outputs (tests/data/recorded/,
provenance in its README). No real device is touched: an unexpected command fails the test."""

from __future__ import annotations

import pytest

from pts.conditioning import purge_ata, purge_scsi, write_cache
from pts.conditioning.purge_plan import PurgeError
from pts.tools import commands, hdparm, sg3
from tests.support.helpers import RECORDED, FakeClock, RecordedRunner, Reply

DEV = "/dev/sdx"
PWD = purge_ata.PASSWORD


def rec(name: str) -> str:
    return (RECORDED / name).read_text()


# argv the suite must send, spelled out once
IDENTIFY = ("hdparm", "-I", DEV)
SET_PASS = ("hdparm", "--user-master", "u", "--security-set-pass", PWD, DEV)
ERASE = ("hdparm", "--user-master", "u", "--security-erase", PWD, DEV)
ERASE_ENH = ("hdparm", "--user-master", "u", "--security-erase-enhanced", PWD, DEV)
DISABLE = ("hdparm", "--user-master", "u", "--security-disable", PWD, DEV)
STATUS = ("hdparm", "--sanitize-status", DEV)
BLOCK = ("hdparm", "--yes-i-know-what-i-am-doing", "--sanitize-block-erase", DEV)

READY = Reply("hdparm-I_not-frozen_derived.txt")
ENABLED = Reply("hdparm-I_enabled_derived.txt")
ERASE_IO_ERROR = Reply(err="hdparm_security-erase_io-error.stderr.txt", rc=5)


def erase_script(erase: list[Reply], identify: list[Reply],
                 disable: list[Reply] | None = None) -> RecordedRunner:
    return RecordedRunner({
        ("hdparm", "-I"): identify,
        ("hdparm", "--user-master", "u", "--security-set-pass"):
            [Reply("hdparm_security-set-pass.txt")],
        ("hdparm", "--user-master", "u", "--security-erase-enhanced"): erase,
        ("hdparm", "--user-master", "u", "--security-erase"): erase,
        ("hdparm", "--user-master", "u", "--security-disable"):
            disable or [Reply("hdparm_security-disable.txt")],
    })


# --- parsing hdparm -I -----------------------------------------------------------------

def test_parse_recorded_frozen_drive_with_spaces_and_sanitize():
    ident = hdparm.parse_identify(rec("hdparm-I_frozen_tesla-2tb.txt"))
    assert ident.model == "TESLA"
    assert (ident.security_supported, ident.frozen, ident.security_enabled, ident.locked,
            ident.count_expired, ident.enhanced_erase_supported) == (True, True, False, False,
                                                                     False, True)
    assert (ident.erase_minutes, ident.enhanced_erase_minutes) == (2, 2)
    assert ident.sanitize_actions() == ["block"]


def test_parse_recorded_frozen_drive_with_tabs_and_no_sanitize():
    ident = hdparm.parse_identify(rec("hdparm-I_frozen_intel-ssdsc2kw512g8.txt"))
    assert ident.model == "INTEL SSDSC2KW512G8"
    assert ident.frozen and ident.security_supported and not ident.security_enabled
    assert ident.sanitize_actions() == []


@pytest.mark.parametrize("name, field", [
    ("hdparm-I_not-frozen_derived.txt", None),
    ("hdparm-I_enabled_derived.txt", "security_enabled"),
    ("hdparm-I_locked_derived.txt", "locked"),
    ("hdparm-I_expired_derived.txt", "count_expired"),
])
def test_parse_security_states(name, field):
    ident = hdparm.parse_identify(rec(name))
    assert not ident.frozen
    flags = {f: getattr(ident, f) for f in ("security_enabled", "locked", "count_expired")}
    assert flags == {f: f == field or (field == "locked" and f == "security_enabled")
                     for f in flags}


def test_parse_no_security_section_means_unsupported():
    ident = hdparm.parse_identify(rec("hdparm-I_no-security-section_derived.txt"))
    assert not ident.security_supported and not ident.frozen


def test_parse_tolerates_question_mark_prefix_and_open_ended_estimate():
    text = ("Security: \n\t(?)\tsupported\n\tnot\tenabled\n\tnot\tsupported: enhanced erase\n"
            "\tmore than 508min for SECURITY ERASE UNIT. \n"
            "Commands/features:\n\t   *\tSANITIZE feature set\n"
            "\t    \tnot\tOVERWRITE_EXT command\n")
    ident = hdparm.parse_identify(text)
    assert not ident.security_supported and not ident.enhanced_erase_supported
    assert ident.erase_minutes == 508 and ident.enhanced_erase_minutes is None
    assert ident.sanitize_supported and not ident.sanitize_overwrite


# --- ATA Security Erase --------------------------------------------------------------------

def test_security_erase_success_enhanced():
    run = erase_script([Reply("hdparm_security-erase.txt")], [READY, READY])
    result = purge_ata.security_erase(DEV, run=run)
    assert run.calls == [IDENTIFY, SET_PASS, ERASE_ENH, IDENTIFY]
    assert result.steps == tuple(run.calls)
    assert result.method == "ATA Security Erase (enhanced)"
    assert result.command == list(ERASE_ENH) and result.deviation is False
    assert "security not enabled" in result.verification
    # the drive's own estimate (2 min) x2 + 1 h margin
    assert run.timeouts[2] == 2 * 2 * 60 + purge_ata.MARGIN_S


def test_security_erase_normal_when_asked():
    run = erase_script([Reply("hdparm_security-erase.txt")], [READY, READY])
    assert purge_ata.security_erase(DEV, enhanced=False, run=run).method == "ATA Security Erase"
    assert run.calls == [IDENTIFY, SET_PASS, ERASE, IDENTIFY]


def test_frozen_drive_sets_no_password_and_says_how_to_unfreeze():
    run = erase_script([Reply("hdparm_security-erase.txt")],
                       [Reply("hdparm-I_frozen_intel-ssdsc2kw512g8.txt")])
    with pytest.raises(PurgeError) as err:
        purge_ata.security_erase(DEV, run=run)
    assert run.calls == [IDENTIFY]
    assert err.value.steps == (IDENTIFY,)
    message = str(err.value)
    assert "frozen" in message and "suspend" in message and "hot-plug" in message
    assert "no password was set" in message


@pytest.mark.parametrize("name, words", [
    ("hdparm-I_locked_derived.txt", "locked"),
    ("hdparm-I_enabled_derived.txt", "enabled"),
    ("hdparm-I_expired_derived.txt", "Power-cycle"),
    ("hdparm-I_no-security-section_derived.txt", "does not support the ATA Security"),
])
def test_refuses_before_writing_anything(name, words):
    run = erase_script([Reply("hdparm_security-erase.txt")], [Reply(name)])
    with pytest.raises(PurgeError, match=words):
        purge_ata.security_erase(DEV, run=run)
    assert run.calls == [IDENTIFY]


def test_erase_failure_clears_password_and_records_clean_up():
    run = erase_script([ERASE_IO_ERROR], [READY, ENABLED, READY])
    with pytest.raises(PurgeError) as err:
        purge_ata.security_erase(DEV, run=run)
    assert run.calls == [IDENTIFY, SET_PASS, ERASE_ENH, IDENTIFY, DISABLE, IDENTIFY]
    assert err.value.steps == tuple(run.calls)
    assert "Input/output error" in str(err.value) and "cleared again" in str(err.value)


def test_ctrl_c_during_erase_clears_password_then_reraises():
    run = erase_script([Reply(raise_=KeyboardInterrupt())], [READY, ENABLED, READY])
    with pytest.raises(KeyboardInterrupt) as err:
        purge_ata.security_erase(DEV, run=run)
    assert run.calls == [IDENTIFY, SET_PASS, ERASE_ENH, IDENTIFY, DISABLE, IDENTIFY]
    assert not getattr(err.value, "__notes__", None)


def test_timeout_of_erase_clears_password():
    timeout = commands.ToolFailed("hdparm did not finish within 3840 s: hdparm ...")
    run = erase_script([Reply(raise_=timeout)], [READY, ENABLED, READY])
    with pytest.raises(PurgeError, match="did not finish within 3840 s"):
        purge_ata.security_erase(DEV, run=run)
    assert run.calls[-3:] == [IDENTIFY, DISABLE, IDENTIFY]


def test_clean_up_failure_names_password_and_command():
    run = erase_script([ERASE_IO_ERROR], [READY, ENABLED],
                       disable=[Reply(err="hdparm_security-disable_io-error.stderr.txt", rc=5)])
    with pytest.raises(PurgeError) as err:
        purge_ata.security_erase(DEV, run=run)
    assert run.calls == [IDENTIFY, SET_PASS, ERASE_ENH, IDENTIFY, DISABLE]
    message = str(err.value)
    assert f"left with the ATA user password {PWD!r}" in message
    assert f"hdparm --user-master u --security-disable {PWD} {DEV}" in message


def test_ctrl_c_with_failed_clean_up_keeps_the_command_in_a_note():
    run = erase_script([Reply(raise_=KeyboardInterrupt())], [READY, ENABLED],
                       disable=[Reply(err="hdparm_security-disable_io-error.stderr.txt", rc=5)])
    with pytest.raises(KeyboardInterrupt) as err:
        purge_ata.security_erase(DEV, run=run)
    assert any(f"--security-disable {PWD} {DEV}" in n for n in err.value.__notes__)


def test_erase_that_leaves_security_enabled_is_not_a_success():
    run = erase_script([Reply("hdparm_security-erase.txt")], [READY, ENABLED, ENABLED, READY])
    with pytest.raises(PurgeError, match="still shows security enabled"):
        purge_ata.security_erase(DEV, run=run)
    assert run.calls == [IDENTIFY, SET_PASS, ERASE_ENH, IDENTIFY, IDENTIFY, DISABLE, IDENTIFY]


def test_failed_set_pass_with_no_password_set_needs_no_disable():
    run = erase_script([Reply("hdparm_security-erase.txt")], [READY, READY])
    run.script[("hdparm", "--user-master", "u", "--security-set-pass")] = [
        Reply(err="hdparm_security-disable_io-error.stderr.txt", rc=5)]
    with pytest.raises(PurgeError, match="cleared again"):
        purge_ata.security_erase(DEV, run=run)
    assert run.calls == [IDENTIFY, SET_PASS, IDENTIFY]


# --- ATA Sanitize --------------------------------------------------------------------------

def sanitize_script(statuses: list[Reply], start: Reply | None = None,
                    identify: str = "hdparm-I_frozen_tesla-2tb.txt") -> RecordedRunner:
    return RecordedRunner({
        ("hdparm", "-I"): [Reply(identify)],
        ("hdparm", "--sanitize-status"): statuses,
        ("hdparm", "--yes-i-know-what-i-am-doing"):
            [start or Reply("hdparm_sanitize-block-erase_started.txt")],
    })


COMPLETED = Reply("hdparm_sanitize-status_idle-completed.txt")
IDLE = Reply("hdparm_sanitize-status_idle.txt")
AT_25 = Reply("hdparm_sanitize-status_in-process-25.txt")
AT_75 = Reply("hdparm_sanitize-status_in-process-75.txt")


def test_ata_sanitize_polls_to_completion():
    run, clock, seen = sanitize_script([COMPLETED, AT_25, AT_75, COMPLETED]), FakeClock(), []
    result = purge_ata.sanitize(DEV, "block", run=run, sleep=clock.sleep, clock=clock,
                          progress=seen.append)
    assert run.calls == [IDENTIFY, STATUS, BLOCK, STATUS, STATUS, STATUS]
    assert result.steps == tuple(run.calls) and result.command == list(BLOCK)
    assert result.method == "ATA Sanitize (block erase)"
    assert seen == [25, 75] and clock.sleeps == [purge_ata.POLL_S, purge_ata.POLL_S]
    assert "Completed Without Error" in result.verification


def test_ata_sanitize_polls_to_failure():
    failed = Reply(err="hdparm_sanitize-status_failed.stderr.txt", rc=5)
    run, clock = sanitize_script([IDLE, AT_25, failed]), FakeClock()
    with pytest.raises(PurgeError, match="completed unsuccessfully") as err:
        purge_ata.sanitize(DEV, run=run, sleep=clock.sleep, clock=clock)
    assert err.value.steps == (IDENTIFY, STATUS, BLOCK, STATUS, STATUS)


def test_ata_sanitize_bad_sense_is_not_trusted():
    run = sanitize_script([IDLE, Reply("hdparm_sanitize-status_after-bad-sense_mx500.txt")],
                          start=Reply("hdparm_sanitize-block-erase_bad-sense_mx500.txt"))
    with pytest.raises(PurgeError, match="bad/missing sense data"):
        purge_ata.sanitize(DEV, run=run, sleep=FakeClock().sleep)
    assert run.calls == [IDENTIFY, STATUS, BLOCK]


def test_ata_sanitize_idle_without_completion_is_a_failure():
    run = sanitize_script([IDLE, Reply("hdparm_sanitize-status_after-bad-sense_mx500.txt")])
    with pytest.raises(PurgeError, match="did not run or failed"):
        purge_ata.sanitize(DEV, run=run, sleep=FakeClock().sleep)


def test_ata_sanitize_never_seen_running_after_earlier_success_is_unproven():
    run = sanitize_script([COMPLETED, COMPLETED])
    with pytest.raises(PurgeError, match="whether it ran is unknown"):
        purge_ata.sanitize(DEV, run=run, sleep=FakeClock().sleep)


def test_ata_sanitize_first_ever_completes_quickly():
    run = sanitize_script([IDLE, COMPLETED])
    result = purge_ata.sanitize(DEV, run=run, sleep=FakeClock().sleep)
    assert run.calls == [IDENTIFY, STATUS, BLOCK, STATUS]
    assert "polled 1 times" in result.verification


def test_ata_sanitize_frozen_or_unsupported_erases_nothing():
    run = sanitize_script([Reply("hdparm_sanitize-status_frozen.txt")])
    with pytest.raises(PurgeError, match="Power-cycle"):
        purge_ata.sanitize(DEV, run=run)
    assert run.calls == [IDENTIFY, STATUS]
    run = sanitize_script([IDLE])
    with pytest.raises(PurgeError, match="does not support ATA Sanitize crypto scramble"):
        purge_ata.sanitize(DEV, "crypto", run=run)
    assert run.calls == [IDENTIFY]


def test_ata_sanitize_timeout():
    run, clock = sanitize_script([IDLE, AT_25]), FakeClock()
    with pytest.raises(PurgeError, match="did not complete within 60 s"):
        purge_ata.sanitize(DEV, run=run, timeout=60, poll_s=10, sleep=clock.sleep, clock=clock)
    assert clock.sleeps == [10] * 6


def test_choose_and_plan_ata():
    tesla = hdparm.parse_identify(rec("hdparm-I_frozen_tesla-2tb.txt"))
    ready = hdparm.parse_identify(rec("hdparm-I_not-frozen_derived.txt"))
    assert purge_ata.choose(tesla)[0] == "sanitize-block"
    assert purge_ata.choose(ready)[0] == "security-erase-enhanced"
    with pytest.raises(PurgeError, match="frozen"):
        purge_ata.choose(hdparm.parse_identify(rec("hdparm-I_frozen_intel-ssdsc2kw512g8.txt")))
    run = RecordedRunner({("hdparm", "-I"): [READY]})
    planned = purge_ata.plan("auto", DEV, run=run)
    assert (planned.method, planned.command) == ("ATA Security Erase (enhanced)",
                                                 list(ERASE_ENH))
    assert run.calls == [IDENTIFY]


# --- ATA write cache -----------------------------------------------------------------------

def test_ata_read_write_cache():
    assert hdparm.read_write_cache(DEV, run=RecordedRunner({("hdparm", "-W"): [
        Reply("hdparm-W_on.txt")]})) is True
    assert hdparm.read_write_cache(DEV, run=RecordedRunner({("hdparm", "-W"): [
        Reply("hdparm-W_not-supported.txt")]})) is None


def test_ata_set_write_cache_verified():
    run = RecordedRunner({("hdparm", "-W0"): [Reply("hdparm-W0_set.txt")],
                      ("hdparm", "-W"): [Reply("hdparm-W_off.txt")]})
    state = write_cache.set_ata(DEV, False, run=run)
    assert run.calls == [("hdparm", "-W0", DEV), ("hdparm", "-W", DEV)]
    assert (state.required, state.actual, state.settable, state.matches) == (
        "WCD", "disabled", True, True)
    assert state.deviation() is None


def test_ata_drive_that_ignores_the_set_is_reported():
    run = RecordedRunner({("hdparm", "-W0"): [Reply("hdparm-W0_set.txt")],
                      ("hdparm", "-W"): [Reply("hdparm-W_on.txt")]})
    state = write_cache.set_ata(DEV, False, run=run)
    assert (state.actual, state.settable, state.matches) == ("enabled", False, False)
    assert "did not take the setting" in state.how
    assert "disabled (WCD)" in state.deviation()


# --- SCSI ----------------------------------------------------------------------------------

SAN = ("sg_sanitize", "--quick", "--early", "--block", DEV)
FMT = ("sg_format", "--format", "--quick", "--early", DEV)
PROGRESS = ("sg_requests", "--progress", DEV)
SENSE = ("sg_requests", "--status", DEV)
NO_SENSE = Reply(err="sg_requests_status_no-sense.stderr.txt")


def scsi_script(start: Reply, progress: list[Reply], status: list[Reply]) -> RecordedRunner:
    return RecordedRunner({("sg_sanitize",): [start], ("sg_format",): [start],
                       ("sg_requests", "--progress"): progress,
                       ("sg_requests", "--status"): status})


def test_parse_opcodes_and_choose():
    ssd = sg3.parse_opcodes(rec("sg_opcodes_sas-ssd.txt"))
    hdd = sg3.parse_opcodes(rec("sg_opcodes_hdd-no-sanitize.txt"))
    assert ssd.sanitize == {"block", "crypto", "overwrite"} and ssd.format_unit
    assert hdd.sanitize == frozenset() and hdd.format_unit
    assert purge_scsi.choose(ssd)[0] == "sanitize-block"
    assert purge_scsi.choose(hdd)[0] == "format-unit"
    with pytest.raises(PurgeError, match="neither SANITIZE"):
        purge_scsi.choose(sg3.ScsiSupport(frozenset(), False, listed=True))


def test_support_unknown_when_device_cannot_list_commands():
    run = RecordedRunner({("sg_opcodes",): [Reply(err="sg_opcodes_invalid-opcode.stderr.txt",
                                              rc=9)]})
    found = sg3.support(DEV, run=run)
    assert not found.listed and purge_scsi.choose(found)[0] == "format-unit"
    planned = purge_scsi.plan("auto", DEV, run=run)
    assert planned.method == "SCSI Format Unit" and planned.command == list(FMT)


def test_scsi_sanitize_success():
    run, clock, seen = scsi_script(
        Reply("sg_sanitize_started.txt"),
        [Reply("sg_requests_progress-41.txt"), Reply("sg_requests_progress-93.txt"), Reply()],
        [NO_SENSE]), FakeClock(), []
    result = purge_scsi.sanitize(DEV, "block", run=run, sleep=clock.sleep, clock=clock,
                           progress=seen.append)
    assert run.calls == [SAN, PROGRESS, PROGRESS, PROGRESS, SENSE]
    assert result.steps == tuple(run.calls) and result.command == list(SAN)
    assert result.method == "SCSI Sanitize (block erase)" and not result.deviation
    assert seen == [41.22, 93.75] and "no sense (exit 0)" in result.verification


def test_scsi_sanitize_unsupported_fails_before_polling():
    run = scsi_script(Reply("sg_sanitize_invalid-opcode_mx500.txt", rc=9), [Reply()], [NO_SENSE])
    with pytest.raises(PurgeError, match="invalid opcode") as err:
        purge_scsi.sanitize(DEV, run=run)
    assert run.calls == [SAN] and err.value.steps == (SAN,)


def test_scsi_sanitize_failure_reported_by_sense():
    failed = Reply(err="sg_requests_status_sanitize-failed.stderr.txt", rc=3)
    run = scsi_script(Reply("sg_sanitize_started.txt"),
                      [Reply("sg_requests_progress-41.txt"), Reply()], [failed])
    with pytest.raises(PurgeError, match="Sanitize command failed"):
        purge_scsi.sanitize(DEV, run=run, sleep=FakeClock().sleep)
    assert run.calls == [SAN, PROGRESS, PROGRESS, SENSE]


def test_scsi_unit_attention_is_asked_again():
    attention = Reply(err="sg_requests_status_unit-attention.stderr.txt", rc=6)
    run = scsi_script(Reply("sg_sanitize_started.txt"), [Reply()], [attention, NO_SENSE])
    purge_scsi.sanitize(DEV, "crypto", run=run)
    assert run.calls == [("sg_sanitize", "--quick", "--early", "--crypto", DEV), PROGRESS,
                         SENSE, SENSE]


def test_scsi_sanitize_timeout():
    run = scsi_script(Reply("sg_sanitize_started.txt"), [Reply("sg_requests_progress-41.txt")],
                      [NO_SENSE])
    clock = FakeClock()
    with pytest.raises(PurgeError, match="did not complete within 90 s"):
        purge_scsi.sanitize(DEV, run=run, timeout=90, poll_s=30, sleep=clock.sleep, clock=clock)
    assert SENSE not in run.calls


def test_scsi_format_unit_success_and_failure():
    run = scsi_script(Reply("sg_format_started.txt"),
                      [Reply("sg_requests_progress-93.txt"), Reply()], [NO_SENSE])
    result = purge_scsi.format_unit(DEV, run=run, sleep=FakeClock().sleep)
    assert run.calls == [FMT, PROGRESS, PROGRESS, SENSE]
    assert result.method == "SCSI Format Unit" and result.command == list(FMT)
    failed = Reply(err="sg_requests_status_format-failed.stderr.txt", rc=3)
    run = scsi_script(Reply("sg_format_started.txt"), [Reply()], [failed])
    with pytest.raises(PurgeError, match="Format command failed"):
        purge_scsi.format_unit(DEV, run=run)


def test_scsi_write_cache_read_set_and_ignored():
    assert sg3.read_write_cache(DEV, run=RecordedRunner({("sdparm", "--get=WCE=1"): [
        Reply("sdparm_get-WCE_sas-full.txt")]})) is True
    run = RecordedRunner({("sdparm", "--set=WCE=0"): [Reply("sdparm_set-WCE.txt")],
                      ("sdparm", "--get=WCE=1"): [Reply("sdparm_get-WCE_off.txt")]})
    state = write_cache.set_scsi(DEV, False, run=run)
    assert run.calls == [("sdparm", "--set=WCE=0", DEV), ("sdparm", "--get=WCE=1", DEV)]
    assert (state.actual, state.settable, state.matches) == ("disabled", True, True)
    run = RecordedRunner({("sdparm", "--set=WCE=0"): [Reply("sdparm_set-WCE.txt")],
                      ("sdparm", "--get=WCE=1"): [Reply("sdparm_get-WCE_on.txt")]})
    state = write_cache.set_scsi(DEV, False, run=run)
    assert (state.actual, state.settable, state.matches) == ("enabled", False, False)
    assert state.deviation() == ("Write cache: the spec requires it disabled (WCD); it could "
                                 "not be set on this device, which reports 'enabled'.")
