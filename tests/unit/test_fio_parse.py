"""fio JSON parsing, from outputs recorded with the real fio 3.33 of this machine (loop
device on tmpfs), and job-file building."""

import json

import pytest

from pts.tools.fio import FioOutputError, Job, job_file, parse_output, random_job, summarize
from tests.support.helpers import DATA


def recorded(name):
    return (DATA / name).read_text()


def test_mixed_point_sums_read_and_write():
    doc = json.loads(recorded("fio-3.33-randrw-65-35-64k.json"))
    s = summarize(parse_output(recorded("fio-3.33-randrw-65-35-64k.json")))
    job = doc["jobs"][0]
    assert s.fio_version == "fio-3.33"
    assert s.read.iops == job["read"]["iops"] and s.write.iops == job["write"]["iops"]
    assert s.iops == pytest.approx(39217.56487 + 21443.113772)
    # IO-weighted mean latency of both directions, in ns
    expected = (2099893.942564 * 39296 + 2102933.397375 * 21486) / (39296 + 21486)
    assert s.lat_mean_ns == pytest.approx(expected)
    assert s.mbps == pytest.approx((2570162331 + 1405295904) / 1e6)   # decimal MB/s


def test_wipc_bytes():
    s = summarize(parse_output(recorded("fio-3.33-wipc-4jobs.json")))
    assert s.write.io_bytes == 2 * 256 * 2**20 and s.read.io_bytes == 0


def test_tolerates_noise_before_json():
    text = "fio: native_fallocate call failed: Operation not supported\n" + \
        recorded("fio-3.33-wipc-4jobs.json")
    assert summarize(parse_output(text)).write.io_bytes == 2 * 256 * 2**20


def test_old_fio_latency_in_microseconds():
    doc = {"jobs": [{"read": {"iops": 10, "total_ios": 10, "lat": {"mean": 5.0, "max": 9.0}},
                     "write": {}}]}
    s = summarize(doc)
    assert s.lat_mean_ns == 5000 and s.lat_max_ns == 9000


def test_jobs_without_group_reporting_are_summed():
    d = {"iops": 100.0, "total_ios": 100, "io_bytes": 409600, "bw_bytes": 409600,
         "lat_ns": {"mean": 1000.0, "max": 5000}}
    e = dict(d, lat_ns={"mean": 3000.0, "max": 7000})
    s = summarize({"jobs": [{"read": d, "write": {}}, {"read": e, "write": {}}]})
    assert s.iops == 200 and s.read.io_bytes == 819200
    assert s.lat_mean_ns == 2000 and s.lat_max_ns == 7000


@pytest.mark.parametrize("text", ["", "garbage", "{\"jobs\": []}", "{\"jobs\": [", "[1, 2]"])
def test_unusable_output_raises(text):
    with pytest.raises(FioOutputError):
        parse_output(text)


def test_job_file_random_mix_and_data_pattern():
    text = job_file("/dev/loop9", [random_job("p02", 65, 65536, 32, 4, 60, 1 << 30)])
    lines = text.splitlines()
    for needed in ("filename=/dev/loop9", "direct=1", "refill_buffers=1", "rw=randrw",
                   "rwmixread=65", "bs=65536", "iodepth=32", "numjobs=4", "time_based=1",
                   "runtime=60", "size=1073741824", "random_generator=tausworthe64"):
        assert needed in lines
    assert "rw=randread" in job_file("/dev/x", [random_job("a", 100, 4096, 1, 1, 1, 4096)])
    assert "rw=randwrite" in job_file("/dev/x", [random_job("a", 0, 4096, 1, 1, 1, 4096)])


def test_job_name_is_checked():
    with pytest.raises(ValueError):
        job_file("/dev/x", [Job("a b]", "write", 4096, 1)])


def test_job_errors_are_named_by_their_errno():
    """A job's "error" is an errno: the message names it (a failing drive says EIO)."""
    from pts.tools.fio_result import errors_text
    doc = json.loads(recorded("fio-3.33-randrw-65-35-64k.json"))
    doc["jobs"] = [dict(doc["jobs"][0], error=e) for e in (5, 0, 5, 28)]
    s = summarize(doc)
    assert s.errors == (5, 5, 28)
    assert errors_text(s.errors) == "5 (Input/output error), 28 (No space left on device)"
