"""The controller's cost per drive (issue 24 §3): `python benchmarks/lab_scale.py`.

    python benchmarks/lab_scale.py [--devices 1,2,4] [--size 128M] [--point-seconds 2]
                                   [--render-jobs N] [--drives emulated|loop]
                                   [--rate-iops N]

For each N, one session of N drives (several --device: one child pytest per drive,
pts.session) runs the short IOPS test of benchmarks/multi_device.py, as a user runs it.

- `--drives emulated` (default): emulated SSDs, throttled by their FTL model, so the drive
  sets the pace of its fio jobs; their FUSE daemons are the drives' cost, not the
  controller's, and are left out. On 2 cores they load the machine: N = 8 is the most here.
- `--drives loop`: loop devices over files in /dev/shm (made with losetup --find and
  detached at the end), the IOPS matrix reduced to RND 4 KiB, and every fio job
  rate-limited to `--rate-iops` per job: a `fio` on PATH (written by this script) copies
  each job file it is given with `rate_iops=N` in its [global] section, then runs the real
  fio. So the drives cost next to no CPU and what is measured is the controller: N = 16
  and 32 fit on 2 cores.
Every 0.5 s the script reads /proc of the controller (the session's pytest) and of each
child: resident memory (RSS) and CPU time. A child is "in its rounds" while it runs fio (a
child process named fio: WIPC and rounds), "rendering" when it has loaded matplotlib and
runs no fio (it loads the renderer only to render its report, pts/report/cli.py, and
matplotlib at its first chart, pts/report/renderers/mpl.py). Prints
one JSON line per N and then a Markdown table:

- wall: the session's wall time; ratio: against N = 1;
- rounds end: when the last drive left its rounds (its last sample running fio), and its
  ratio against N = 1: the rounds phase alone, before the reports render;
- controller: its peak RSS and its mean CPU (% of one core) over the session;
- child in rounds: median RSS and mean CPU per child while in its rounds (CPU: from its
  first to its last sample in rounds, so the gaps between fio runs count too);
- child rendering: peak RSS per child while rendering; renders at once: the most children
  rendering in one sample (at most --render-jobs when it is given), and the session's peak
  total RSS of its rendering children;
- round end to its record: per round of every drive, from fio's end of the round (the
  timestamp_ms of its JSON output) to the round's ledger record; median and max.

On a machine with fewer free cores than drives, the emulator daemons and fio compete for the
CPU and the wall ratio says so (the table states the machine's cores and load).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
from multi_device import TEST, statuses  # noqa: E402  (the same test as multi_device.py)

PAGE = os.sysconf("SC_PAGE_SIZE")
TICK = os.sysconf("SC_CLK_TCK")
SAMPLE_S = 0.5


def proc_stat(pid: int) -> tuple[int, float] | None:
    """(RSS bytes, CPU seconds) of a process, None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        rss = int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return None
    return rss, (int(fields[11]) + int(fields[12])) / TICK     # utime + stime


def children(pid: int) -> list[int]:
    try:
        found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    out = []
    for c in map(int, found):
        try:
            if b"pytest" in Path(f"/proc/{c}/cmdline").read_bytes():
                out.append(c)
        except OSError:
            pass
    return out


def phase(pid: int) -> str | None:
    """"rounds" while the process runs fio (a child process named fio), "render" when it
    has loaded matplotlib and runs no fio, else None (start-up, purge, between steps)."""
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        if any(Path(f"/proc/{k}/comm").read_text().startswith("fio") for k in kids):
            return "rounds"
        return "render" if "matplotlib" in Path(f"/proc/{pid}/maps").read_text() else None
    except OSError:
        return None


class Child:
    def __init__(self):
        self.rounds_rss: list[int] = []
        self.render_rss: list[int] = []
        self.first: tuple[float, float] | None = None     # (wall, cpu) at first sample
        self.last_rounds: tuple[float, float] | None = None

    def sample(self, now: float, rss: int, cpu: float, where: str | None) -> None:
        if where == "render":
            self.render_rss.append(rss)
        if where != "rounds":
            return
        self.rounds_rss.append(rss)
        if self.first is None:
            self.first = (now, cpu)
        self.last_rounds = (now, cpu)

    def cpu_pct(self) -> float | None:
        if self.first is None or self.last_rounds is None or \
                self.last_rounds[0] - self.first[0] < 1:
            return None
        return 100 * (self.last_rounds[1] - self.first[1]) / \
            (self.last_rounds[0] - self.first[0])


RATE_FIO = """#!/usr/bin/env python3
# lab_scale.py's fio: each job file given gets rate_iops=N in its [global], then real fio.
import os, sys, tempfile
real, rate = sys.argv[0] + ".real", {rate}
args = []
for a in sys.argv[1:]:
    if a.endswith(".fio") and os.path.isfile(a):
        text = open(a).read().replace("[global]\\n", f"[global]\\nrate_iops={{rate}}\\n", 1)
        fd, a = tempfile.mkstemp(suffix=".fio", dir=os.path.dirname(a))
        os.write(fd, text.encode()); os.close(fd)
    args.append(a)
os.execv(real, [real, *args])
"""
LOOP_TEST = ("--iops-block-sizes", "4KiB", "--iops-rw-mixes", "100/0,0/100")


@contextlib.contextmanager
def loop_drives(n: int, size: str, rate_iops: int) -> Iterator[tuple[list[str], dict]]:
    """N loop devices over /dev/shm files, and the environment whose fio is rate-limited."""
    folder = Path(tempfile.mkdtemp(prefix="pts-lab-loops-", dir="/dev/shm"))
    made: list[str] = []
    try:
        fio_dir = folder / "bin"
        fio_dir.mkdir()
        real = shutil.which("fio")
        (fio_dir / "fio.real").symlink_to(real)
        (fio_dir / "fio").write_text(RATE_FIO.format(rate=rate_iops))
        (fio_dir / "fio").chmod(0o755)
        for k in range(n):
            img = folder / f"drive-{k}.img"
            with img.open("wb") as fh:
                fh.truncate(parse_size(size))
            made.append(subprocess.run(["losetup", "--find", "--show", str(img)], check=True,
                                       capture_output=True, text=True).stdout.strip())
        yield made, {**os.environ, "PATH": f"{fio_dir}:{os.environ['PATH']}"}
    finally:
        for dev in made:
            subprocess.run(["losetup", "-d", dev], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1].upper()] if text[-1].upper() in units \
        else int(text)


def session(n: int, size: str, point_seconds: int, render_jobs: int | None = None,
            drives: str = "emulated", rate_iops: int = 100) -> dict:
    with contextlib.ExitStack() as stack:
        if drives == "loop":
            devices, env = stack.enter_context(loop_drives(n, size, rate_iops))
            test = (*TEST, *LOOP_TEST)
        else:
            devices, env, test = [f"emulated:{size}"] * n, None, TEST
        return _session(n, devices, test, env, point_seconds, render_jobs)


def _session(n: int, devices: list[str], test: tuple, env: dict | None, point_seconds: int,
             render_jobs: int | None) -> dict:
    reports = Path(tempfile.mkdtemp(prefix=f"pts-lab-{n}-"))
    argv = [sys.executable, "-m", "pytest", "pts/", *test, "--point-seconds",
            str(point_seconds), "--reports-dir", str(reports)]
    for d in devices:
        argv += ["--device", d]
    if render_jobs is not None:
        argv += ["--render-jobs", str(render_jobs)]
    start = time.monotonic()
    p = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, env=env)
    controller: list[int] = []
    kids: dict[int, Child] = {}
    first_cpu = None
    rendering: list[tuple[int, int]] = []       # per sample: children rendering, their RSS
    while p.poll() is None:
        now = time.monotonic()
        if (mine := proc_stat(p.pid)) is not None:
            controller.append(mine[0])
            first_cpu = first_cpu or (now, mine[1])
            last_cpu = (now, mine[1])
        # one drive runs in the session's own process (no child): it is its drive's run too
        now_rendering = [0, 0]
        for c in children(p.pid) or ([p.pid] if n == 1 else []):
            if (st := proc_stat(c)) is not None:
                where = phase(c)
                kids.setdefault(c, Child()).sample(now, st[0], st[1], where)
                if where == "render":
                    now_rendering[0] += 1
                    now_rendering[1] += st[0]
        rendering.append(tuple(now_rendering))
        time.sleep(SAMPLE_S)
    wall = time.monotonic() - start
    if p.returncode not in (0, 1):
        sys.exit(f"N={n}: session failed (exit {p.returncode}): {p.stderr.read()[-3000:]}")
    mib = 1 << 20
    cpus = [c.cpu_pct() for c in kids.values() if c.cpu_pct() is not None]
    lags = record_lags(reports)
    ends = [c.last_rounds[0] - start for c in kids.values() if c.last_rounds is not None]
    return {
        "devices": n, "wall_s": round(wall, 1), "exit": p.returncode,
        # the last drive's last sample in its rounds: the session's rounds phase, before the
        # reports (CPU-bound: on few cores they queue, whatever the controller does)
        "rounds_end_s": round(max(ends), 1) if ends else None,
        "statuses": statuses(reports), "children_seen": len(kids),
        "record_lag_median_s": round(statistics.median(lags), 3) if lags else None,
        "record_lag_max_s": round(max(lags), 3) if lags else None,
        "controller_rss_peak_mib": round(max(controller) / mib, 1),
        "controller_cpu_pct": round(100 * (last_cpu[1] - first_cpu[1]) /
                                    max(last_cpu[0] - first_cpu[0], 1e-9), 2),
        "child_rounds_rss_median_mib": round(statistics.median(
            r for c in kids.values() for r in c.rounds_rss) / mib, 1),
        "child_rounds_cpu_pct": round(statistics.mean(cpus), 2) if cpus else None,
        "child_render_rss_peak_mib": round(max(
            (r for c in kids.values() for r in c.render_rss), default=0) / mib, 1),
        "render_jobs": render_jobs,
        "renders_at_once_peak": max((k for k, _ in rendering), default=0),
        "rendering_rss_total_peak_mib": round(max((r for _, r in rendering), default=0)
                                              / mib, 1),
    }


def record_lags(reports: Path) -> list[float]:
    """Seconds from each round's end (its fio JSON's timestamp_ms: fio writes its output
    when the round's I/O is over) to the round's record in its drive's ledger: what the
    drive's run does in between (parse, point records, counters, steady-state check)."""
    lags = []
    for ledger in reports.glob("*/*/ledger.jsonl"):
        for line in ledger.read_text().splitlines():
            r = json.loads(line)
            if r.get("type") != "round":
                continue
            out = ledger.parent / "raw" / r["test"] / f"round-{r['round']:02d}" / "round.json"
            try:
                lags.append(r["time"] - json.loads(out.read_text())["timestamp_ms"] / 1000)
            except (OSError, ValueError, KeyError):
                continue
    return lags


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--devices", default="1,2,4",
                    help="comma-separated N to measure (default %(default)s)")
    ap.add_argument("--size", default="128M")
    ap.add_argument("--point-seconds", type=int, default=2)
    ap.add_argument("--render-jobs", type=int, default=None,
                    help="passed to the session (default: not given, the session's own)")
    ap.add_argument("--drives", choices=("emulated", "loop"), default="emulated",
                    help="emulated SSDs, or loop devices with rate-limited fio jobs "
                         "(default %(default)s)")
    ap.add_argument("--rate-iops", type=int, default=100,
                    help="--drives loop: rate_iops of every fio job (default %(default)s)")
    args = ap.parse_args()
    rows = []
    for n in (int(x) for x in args.devices.split(",")):
        row = session(n, args.size, args.point_seconds, args.render_jobs, args.drives,
                      args.rate_iops)
        row["ratio"] = round(row["wall_s"] / rows[0]["wall_s"], 3) if rows else 1.0
        row["rounds_ratio"] = (round(row["rounds_end_s"] / rows[0]["rounds_end_s"], 3)
                               if rows and row["rounds_end_s"] and rows[0]["rounds_end_s"]
                               else 1.0)
        rows.append(row)
        print(json.dumps(row), flush=True)
    print(f"\n{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the end\n")
    print("| N | wall (s) | ratio | rounds end (s) | its ratio | controller peak RSS (MiB) | "
          "controller CPU (% core) | "
          "child RSS in rounds (MiB) | child CPU in rounds (% core) | child peak RSS "
          "rendering (MiB) | renders at once (peak) | rendering children's RSS (peak MiB) | "
          "round end to its record (s, median / max) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['devices']} | {r['wall_s']} | {r['ratio']} | {r['rounds_end_s']} | "
              f"{r['rounds_ratio']} | "
              f"{r['controller_rss_peak_mib']} | {r['controller_cpu_pct']} | "
              f"{r['child_rounds_rss_median_mib']} | {r['child_rounds_cpu_pct']} | "
              f"{r['child_render_rss_peak_mib']} | {r['renders_at_once_peak']} | "
              f"{r['rendering_rss_total_peak_mib']} | "
              f"{r['record_lag_median_s']} / {r['record_lag_max_s']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
