#!/usr/bin/env python3
"""Runs Kanoko's bench programs and writes the speed table, docs/speed.md (issue 15, point 6).

Every figure comes with a baseline measured in the same run and the ratio figure / baseline:

  force evaluation and RK4 step    bench/bench_forces.cpp (Google Benchmark's JSON output): the
                                   current Barnes-Hut evaluator against barnes-hut-v1 (issue 4's)
  accuracy (median, p99)           the same cases' relative force error against direct summation
  ingest MB/s per format           bench/bench_readers.cpp --smpi and --formats: Kanoko against
                                   pj_dump, otf2-print, or `wc -l` where no reader exists
  time to first frame              bench/bench_viewer.cpp --watch: `kanoko view TRACE` while it
                                   simulates, against `kanoko info` reading the same trace
  replay, bytes per body           bench/bench_trajectory.cpp: the current trajectory format against format 1

The benches print machine-readable lines (`BENCH key=value ...`, or JSON for bench_forces); this
script collects them, so the table never copies a number by hand. Build the benches first:

  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKANOKO_BENCH=ON
  cmake --build build --target kanoko kanoko_bench_forces kanoko_bench_readers \\
      kanoko_bench_viewer kanoko_bench_trajectory
  scripts/speed-table.py                    # the full run (1M bodies, 200 MB traces): 15-25 min
  scripts/speed-table.py --quick --out /tmp/speed.md    # small sizes, 1-2 min (the ctest)
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent

# Sizes and options of the two kinds of run.
FULL = {
    "bodies": [1_000, 10_000, 100_000, 1_000_000],
    "forces_args": [],
    "smpi_args": ["--smpi-iters", "200", "--repeat", "5"],
    "formats_args": ["--formats-mb", "200", "--repeat", "3"],
    # 10 000 ranks, about 1 GB; a given mapping: the inferred one calibrates with a whole
    # simulation before the first frame (docs/viewer.md, "Watching a simulation").
    "viewer_args": ["--mapping", str(SOURCE / "mappings/ring.toml")],
    "trajectory_args": ["--bodies", "1000", "--frames", "400", "--repeat", "3"],
}
QUICK = {
    "bodies": [1_000, 10_000],
    "forces_args": ["--benchmark_min_time=0.02"],
    "smpi_args": ["--smpi-trace", str(SOURCE / "traces/smpi/halo3d-27-torus-heavy.trace"), "--repeat", "1"],
    "formats_args": ["--formats-mb", "2", "--repeat", "1"],
    "viewer_args": ["--ranks", "64", "--messages", "20000", "--play", "2"],
    "trajectory_args": ["--bodies", "200", "--frames", "50", "--repeat", "1"],
}

# Accuracy is measured from 10 000 bodies on (bench_forces' accuracy_counters).
ACCURACY_MIN_BODIES = 10_000

# Formats of the ingest rows: bench_readers case, label, baseline tool and its description.
FORMATS = [
    ("paje-smpi", "Pajé, a real SimGrid SMPI trace", "pj_dump", "`pj_dump FILE > /dev/null`"),
    ("paje-synthetic", "Pajé, generated in the SMPI shape", "pj_dump", "`pj_dump FILE > /dev/null`"),
    ("paraver", "Paraver", "wc-l", "`wc -l` (no Paraver reader in Debian)"),
    ("otf2", "OTF2", "otf2-print", "`otf2-print ANCHOR > /dev/null`"),
    ("chrome-json", "Chrome trace-event JSON", "wc-l", "`wc -l` (no reference reader)"),
    ("native", "native (.kntr)", "wc-l", "`wc -l` (no other reader)"),
]


class BenchError(RuntimeError):
    pass


def fmt(v):
    """Four significant digits; the table's numbers parse back with float()."""
    return f"{v:.4g}"


def count(n):
    return f"{n:,}".replace(",", " ")


def run_bench(logdir, name, argv, env=None):
    """Runs one bench, its output in logdir/name.log; returns its standard output."""
    log = Path(logdir) / f"{name}.log"
    print(f"speed-table: {name}: {' '.join(argv)}", file=sys.stderr, flush=True)
    start = time.monotonic()
    with open(log, "w") as out:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        out.write(proc.stdout)
    print(f"speed-table: {name}: {time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.splitlines()[-5:])
        raise BenchError(f"{name} failed (exit status {proc.returncode}); see {log}:\n{tail}")
    return proc.stdout


def bench_lines(output, bench):
    """The `BENCH bench=NAME key=value ...` lines of a bench's output, as dictionaries."""
    lines = []
    for line in output.splitlines():
        if not line.startswith("BENCH "):
            continue
        fields = dict(f.split("=", 1) for f in line.split()[1:])
        if fields.get("bench") == bench:
            lines.append(fields)
    return lines


def need(binary):
    if not binary.is_file():
        raise BenchError(f"{binary} is missing: configure with -DKANOKO_BENCH=ON and build it")
    return str(binary)


def forces_rows(build, logdir, sizes, extra):
    sizes_re = "|".join(str(n) for n in sizes)
    json_out = Path(logdir) / "forces.json"
    run_bench(logdir, "bench_forces", [
        need(build / "bench/kanoko_bench_forces"),
        f"--benchmark_filter=^(BarnesHut|BarnesHutV1|Rk4Step|Rk4StepV1)/({sizes_re})/2(/|$)",
        f"--benchmark_out={json_out}", "--benchmark_out_format=json", *extra],
        # The OpenMP threads wait as kanoko simulate's do (docs/engine-performance.md, "Threads on
        # a busy machine"), baseline and new evaluator alike; the user's own setting wins.
        None if "OMP_WAIT_POLICY" in os.environ or "GOMP_SPINCOUNT" in os.environ
        else dict(os.environ, GOMP_SPINCOUNT="10000"))
    try:
        data = json.loads(json_out.read_text())
    except ValueError as e:
        raise BenchError(f"{json_out} is not Google Benchmark's JSON output ({e})") from e
    medians = {}
    for b in data.get("benchmarks", []):
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") == "median":
            unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b["time_unit"]]
            # "BarnesHut/1000/2/repeats:5/real_time": the function, N and threads.
            key = "/".join(b["run_name"].split("/")[:3])
            medians[key] = dict(b, seconds=b["real_time"] * unit)

    def get(key):
        if key not in medians:
            raise BenchError(f"bench_forces gave no median for {key} (see {json_out})")
        return medians[key]

    baseline = "barnes-hut-v1 (issue 4's evaluator)"
    rows = []
    for n in sizes:
        now, base = get(f"BarnesHut/{n}/2"), get(f"BarnesHutV1/{n}/2")
        rows.append(("force evaluation, Barnes–Hut θ = 0.5, 2 threads (ms)", f"N = {count(n)}",
                     1e3 * now["seconds"], baseline, 1e3 * base["seconds"]))
    for n in sizes:
        now, base = get(f"Rk4Step/{n}/2"), get(f"Rk4StepV1/{n}/2")
        rows.append(("full RK4 step of the model, 2 threads (ms)", f"N = {count(n)}", 1e3 * now["seconds"],
                     baseline + ", a tree per evaluation", 1e3 * base["seconds"]))
    for stat, label in (("err_median", "median"), ("err_p99", "99th percentile")):
        for n in sizes:
            if n < ACCURACY_MIN_BODIES:
                continue
            now, base = get(f"BarnesHut/{n}/2"), get(f"BarnesHutV1/{n}/2")
            if stat not in now or stat not in base:
                raise BenchError(f"bench_forces gave no {stat} for N = {n} (see {json_out})")
            rows.append((f"relative force error against direct summation, {label}", f"N = {count(n)}",
                         now[stat], baseline, base[stat]))
    return rows


def ingest_rows(build, logdir, smpi_args, formats_args):
    readers = need(build / "bench/kanoko_bench_readers")
    found = {}
    for name, args in (("bench_readers_smpi", ["--smpi", "--threads", "2", *smpi_args]),
                       ("bench_readers_formats", ["--formats", "--threads", "2", *formats_args])):
        for line in bench_lines(run_bench(logdir, name, [readers, *args]), "readers"):
            found[(line["case"], line["tool"])] = line
    rows = []
    for case, label, tool, described in FORMATS:
        k, b = found.get((case, "kanoko")), found.get((case, tool))
        if k is None or b is None:
            raise BenchError(f"bench_readers gave no {case} measurement for kanoko and {tool} (see {logdir})")
        mb = float(k["mb"])
        rows.append((f"ingest: {label}, file → binned timeline, 2 threads (MB/s, wall)", f"{fmt(mb)} MB",
                     mb / float(k["wall_s"]), described, float(b["mb"]) / float(b["wall_s"])))
    return rows


def viewer_rows(build, logdir, args):
    argv = [need(build / "bench/kanoko_bench_viewer"), "--watch", *args]
    env = dict(os.environ, ALSOFT_DRIVERS="null")
    if not env.get("DISPLAY"):
        if shutil.which("xvfb-run") is None:
            raise BenchError("the viewer bench needs a display: install xvfb (xvfb-run) or set DISPLAY")
        argv = ["xvfb-run", "-a", "-s", "-screen 0 1280x720x24 -noreset", *argv]
    lines = bench_lines(run_bench(logdir, "bench_viewer_watch", argv, env), "viewer")
    if not lines:
        raise BenchError(f"bench_viewer --watch printed no BENCH line (see {logdir})")
    v = lines[-1]
    mapping = f", {Path(args[args.index('--mapping') + 1]).relative_to(SOURCE)}" if "--mapping" in args else ""
    size = f"{count(int(v['ranks']))} ranks, {fmt(float(v['mb']))} MB{mapping}"
    return [("time to the first frame of `kanoko view TRACE` while it simulates (s)", size, float(v["first_frame_s"]),
             "`kanoko info TRACE` (reading the trace alone)", float(v["info_s"])),
            ("time to the first frame, first use on the machine (GL shader cache empty) (s)", size,
             float(v["first_frame_cold_s"]), "`kanoko info TRACE` (reading the trace alone)", float(v["info_cold_s"]))]


def trajectory_rows(build, logdir, args):
    out = run_bench(logdir, "bench_trajectory", [need(build / "bench/kanoko_bench_trajectory"), *args])
    found = {(x["case"], x["format"]): float(x["value"]) for x in bench_lines(out, "trajectory")}
    m = re.search(r"trajectory: (\d+) bodies, (\d+) statistics, (\d+) frames", out)
    size = f"{count(int(m.group(1)))} bodies, {m.group(3)} frames" if m else ""
    rows = []
    for case, label in (("replay", "replay: every frame read from the trajectory (body-frames/s)"),
                        ("bytes_per_body_frame", "trajectory bytes per body per frame (13 statistics)")):
        current = max((f for c, f in found if c == case), key=int, default="1")  # the format written today
        if current == "1" or (case, "1") not in found:
            raise BenchError(f"bench_trajectory gave no {case} (see {logdir})")
        rows.append((label, size, found[(case, current)], "format 1 (one checksum, no blocks), same frames",
                     found[(case, "1")]))
    return rows


def machine():
    def cmd(argv):
        try:
            return subprocess.run(argv, capture_output=True, text=True, cwd=SOURCE).stdout.strip()
        except OSError:
            return ""
    model = ""
    for line in cmd(["lscpu"]).splitlines():
        if line.startswith("Model name:"):
            model = line.split(":", 1)[1].strip()
    commit = cmd(["git", "rev-parse", "--short=12", "HEAD"]) or "unknown"
    if cmd(["git", "status", "--porcelain", "--untracked-files=no"]):
        commit += " (with uncommitted changes)"
    return {"cpu": model or "unknown", "cores": os.cpu_count() or 0, "commit": commit}


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def render(rows, info, quick):
    lines = [
        "# Speed table",
        "",
        "Generated by `scripts/speed-table.py" + (" --quick" if quick else "") +
        "` (docs/engine-performance.md, docs/trace-formats.md and docs/trajectory-format.md say how each",
        "bench works). Every figure has a baseline measured in the same run; the ratio is figure / baseline",
        "(below 1: less time or error than the baseline; above 1: more throughput). Medians of repetitions;",
        "wall-clock times depend on the machine's load, so compare ratios between runs, not times.",
        "",
        f"- date: {info['date']}",
        f"- commit: {info['commit']}",
        f"- CPU: {info['cpu']} (lscpu), {info['cores']} cores",
        f"- load average (1, 5, 15 min): {info['load_start']} at the start, {info['load_end']} at the end",
        f"- run: {'quick (small sizes: the test of the generator, not figures to quote)' if quick else 'full'}",
        "",
        "| measurement | size | Kanoko | baseline | baseline value | ratio |",
        "|---|---|---|---|---|---|",
    ]
    for what, size, value, baseline, base_value in rows:
        lines.append(f"| {what} | {size} | {fmt(value)} | {baseline} | {fmt(base_value)} | {fmt(value / base_value)} |")
    lines.append("")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(
        description="Run Kanoko's benches and write the speed table (docs/speed.md): force evaluation and RK4 "
                    "step at 1k-1M bodies with their accuracy, ingest MB/s per format, time to first frame, "
                    "replay and trajectory size, each with a baseline from the same run and the ratio to it.")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes (1k and 10k bodies, 2 MB traces, 64 ranks): 1-2 minutes, for the test")
    parser.add_argument("--out", default=str(SOURCE / "docs/speed.md"),
                        help="the markdown page to write (default: docs/speed.md); written only if every bench succeeds")
    parser.add_argument("--build", default=str(SOURCE / "build"),
                        help="the build folder with the bench programs (default: build)")
    parser.add_argument("--logs", help="keep every bench's output in this folder (default: a temporary folder, removed)")
    args = parser.parse_args()
    sizes = QUICK if args.quick else FULL
    build = Path(args.build)
    out = Path(args.out)
    logdir = args.logs or tempfile.mkdtemp(prefix="kanoko-speed-table-")
    os.makedirs(logdir, exist_ok=True)
    info = dict(machine(), date=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), load_start=load_average())
    try:
        rows = forces_rows(build, logdir, sizes["bodies"], sizes["forces_args"])
        rows += ingest_rows(build, logdir, sizes["smpi_args"], sizes["formats_args"])
        rows += viewer_rows(build, logdir, sizes["viewer_args"])
        rows += trajectory_rows(build, logdir, sizes["trajectory_args"])
        info["load_end"] = load_average()
        page = render(rows, info, args.quick)
    except (BenchError, OSError, ValueError, KeyError, ZeroDivisionError) as e:
        print(f"speed-table: error: {e}", file=sys.stderr)
        print(f"speed-table: {out} not written; bench outputs in {logdir}", file=sys.stderr)
        return 1
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(page)
    os.replace(tmp, out)  # never a half-written table
    if not args.logs:
        shutil.rmtree(logdir, ignore_errors=True)
    print(f"speed-table: wrote {out} ({len(rows)} rows)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
