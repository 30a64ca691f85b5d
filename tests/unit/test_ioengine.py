"""--ioengine / --io-poll (issue 33 §2): the engine in every job file fio runs (Fio.placed, as
run_document writes it), in the report's header and in compare's differences; a run.json
without `ioengine` (from before the option) reads as libaio."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

from pts.compare.data import differences
from pts.report.pages import snia_header
from pts.stored.data import load_run
from pts.tools.fio import Fio, FioError, FioFailed, engine_options, job_file, random_job
from pts.tools.fio_engine import rounded_depths
from tests.support import snapshots

IO_URING = ["ioengine=io_uring", "fixedbufs=1", "registerfiles=1"]


def _global(text: str) -> list[str]:
    return text.split("\n\n", 1)[0].splitlines()


def _written(tmp_path, fio: Fio) -> str:
    """The job file run_document writes before fio starts (fio then fails on the missing
    file: the job file is what is looked at)."""
    absent = "/proc/pts-no-such-folder/dev"     # fio cannot create it (it makes folders)
    text = job_file(absent, [random_job("p00", 100, 4096, 1, 1, 1, 4096)])
    with pytest.raises(FioError):
        fio.run_document(absent, text, tmp_path, "t", timeout=60, histograms=False)
    return (tmp_path / "t.fio").read_text()


def test_default_engine_is_libaio(tmp_path):
    glob = _global(_written(tmp_path, Fio()))
    assert [g for g in glob if g.split("=")[0] in ("ioengine", "fixedbufs", "registerfiles",
                                                   "hipri")] == ["ioengine=libaio"]


def test_io_uring_job_file_has_its_options_once(tmp_path):
    fio = Fio()
    fio.engine = engine_options("io_uring")
    fio.cpus_allowed = "0-1"
    text = _written(tmp_path, fio)
    glob = _global(text)
    assert glob[:5] == ["[global]", "cpus_allowed=0-1", *IO_URING]
    assert "ioengine=libaio" not in text and "hipri" not in text
    assert text.count("ioengine=") == 1
    assert "[p00]\nrw=randread\n" in text            # the job sections are untouched


def test_io_poll_adds_hipri():
    assert engine_options("io_uring", io_poll=True) == {
        "ioengine": "io_uring", "fixedbufs": "1", "registerfiles": "1", "hipri": "1"}
    assert engine_options("libaio") == {"ioengine": "libaio"}
    fio = Fio()
    fio.engine = engine_options("io_uring", io_poll=True)
    glob = _global(fio.placed(job_file("/dev/x", [random_job("a", 0, 4096, 1, 1, 1, 4096)])))
    assert glob[1:6] == [*IO_URING, "hipri=1", "filename=/dev/x"]


def test_a_job_file_written_for_another_engine_runs_with_this_one():
    """A job file that names io_uring (job_file's engine=, the dry-run plan) run by a
    libaio Fio: none of io_uring's options stay behind."""
    text = job_file("/dev/x", [random_job("a", 0, 4096, 1, 1, 1, 4096)],
                    engine=engine_options("io_uring", True))
    assert all(o in text for o in IO_URING) and "hipri=1" in text
    glob = _global(Fio().placed(text))
    assert [g for g in glob if g.split("=")[0] in ("ioengine", "fixedbufs", "registerfiles",
                                                   "hipri")] == ["ioengine=libaio"]


def _run(**options):
    return SimpleNamespace(spec={"name": "pts-e-1.1"}, options=options)


def test_compare_names_different_engines():
    found = differences([_run(ioengine="libaio", io_poll=False),
                         _run(ioengine="io_uring", io_poll=True)])
    assert found == ("I/O engine (figures of one drive differ by engine on a fast drive): "
                     "run 1 'libaio', run 2 'io_uring (fixed buffers, registered files, "
                     "polled completion)'",)


def test_compare_reads_a_run_without_ioengine_as_libaio():
    assert differences([_run(point_seconds=60), _run(point_seconds=60, ioengine="libaio",
                                                     io_poll=False)]) == ()
    assert differences([_run(), _run(ioengine="io_uring", io_poll=False)]) == (
        "I/O engine (figures of one drive differ by engine on a fast drive): run 1 'libaio', "
        "run 2 'io_uring (fixed buffers, registered files)'",)


@pytest.mark.parametrize("options,shown", [
    ({}, "libaio"),                   # the reference run is from before --ioengine
    ({"ioengine": "io_uring", "io_poll": False}, "io_uring (fixed buffers, registered files)"),
    ({"ioengine": "io_uring", "io_poll": True},
     "io_uring (fixed buffers, registered files, polled completion)")])
def test_header_shows_the_engine(options, shown):
    run = load_run(snapshots.REFERENCE_RUN)
    run = dataclasses.replace(run, options=run.options | options)
    for test in run.tests:
        platform = dict(snia_header.cells(run, test)[0])
        assert platform["I/O engine"] == shown, test.name


def test_a_replayed_iolog_runs_without_registered_files():
    """fio 3.33 refuses registerfiles where a read_iolog opens its own files (engine init
    fails): that job file keeps io_uring and fixed buffers only."""
    fio = Fio()
    fio.engine = engine_options("io_uring")
    plain = job_file("/dev/x", [random_job("a", 70, 4096, 2, 1, 1, 4096)])
    replay = plain + "read_iolog=/run/step1.iolog\nreplay_no_stall=1\n"
    assert "registerfiles=1" in _global(fio.placed(plain))
    glob = _global(fio.placed(replay))
    assert glob[1:3] == ["ioengine=io_uring", "fixedbufs=1"]
    assert "registerfiles=1" not in fio.placed(replay)


@pytest.mark.parametrize("version, depths, refused", [
    ("fio-3.33", (6, 32), [6]), ("fio-3.33", (3, 5, 12), [3, 5, 12]),
    ("fio-3.33", (1, 2, 8, 32), []), ("fio-3.39", (6,), []), ("fio-3.41-12-gabc", (6,), [])])
def test_io_uring_before_fio_3_39_refuses_a_non_power_of_two_iodepth(tmp_path, version, depths,
                                                                      refused):
    """fio < 3.39 runs iodepth 6 under io_uring as 8 (fio commit af0ad0f; measured 7.47 in
    flight with fio 3.33): such a job file stops before fio runs, naming the depths and the
    fix; libaio, powers of two and fio 3.39 run as asked."""
    jobs = [random_job(f"p{d}", 100, 4096, d, 1, 1, 4096) for d in depths]
    text = job_file("/proc/pts-no-such-folder/dev", jobs)
    fio = Fio()
    fio.engine, fio.version = engine_options("io_uring"), version
    assert rounded_depths(text, fio.engine, version) == refused
    assert rounded_depths(text, engine_options("libaio"), version) == []
    if refused:
        with pytest.raises(FioFailed, match="install fio 3.39 or later") as exc:
            fio.run_document("/proc/pts-no-such-folder/dev", text, tmp_path, "t", timeout=60,
                             histograms=False)
        assert f"{refused[0]} as {1 << (refused[0] - 1).bit_length()}" in str(exc.value)
        assert "--ioengine libaio" in str(exc.value)
        assert not (tmp_path / "t.fio").exists() and not (tmp_path / "t.cmd").exists()
