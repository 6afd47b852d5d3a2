#!/usr/bin/env python3
"""The speed table's generator (scripts/speed-table.py) run with --quick: the page it writes has
every row (force evaluation and RK4 step at each size, both accuracy percentiles, every ingest
format, the first frame, replay and bytes per body), the machine's facts, numbers that parse, and
every ratio equal to figure / baseline. A failed bench leaves no page behind.

    tests/bench/test_speed_table.py --build BUILD     (ctest -L speedtable)
"""

import argparse
import math
import re
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent.parent
GENERATOR = SOURCE / "scripts/speed-table.py"

# The rows of a --quick run, by the start of the measurement and the size column.
EXPECTED = (
    [("force evaluation", f"N = {n}") for n in ("1 000", "10 000")]
    + [("full RK4 step", f"N = {n}") for n in ("1 000", "10 000")]
    + [("relative force error against direct summation, median", "N = 10 000"),
       ("relative force error against direct summation, 99th percentile", "N = 10 000")]
    + [(f"ingest: {f}", "MB") for f in ("Pajé, a real SimGrid SMPI trace", "Pajé, generated in the SMPI shape",
                                         "Paraver", "OTF2", "Chrome trace-event JSON", "native (.kntr)")]
    + [("time to the first frame of", "ranks"), ("time to the first frame, first use", "ranks"), ("replay:", "bodies"), ("trajectory bytes per body per frame", "bodies")]
)

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def number(text, what):
    try:
        v = float(text)
    except ValueError:
        failures.append(f"{what}: '{text}' is not a number")
        return None
    check(math.isfinite(v) and v > 0, f"{what}: {v} is not a positive finite number")
    return v


def check_page(page):
    for key in ("date", "commit", "CPU", "load average (1, 5, 15 min)"):
        m = re.search(rf"^- {re.escape(key)}: (.+)$", page, re.M)
        check(m is not None and m.group(1).strip() not in ("", "unknown"), f"no '{key}' line with a value")
    cores = re.search(r"^- CPU: .+, (\d+) cores$", page, re.M)
    check(cores is not None and int(cores.group(1)) >= 1, "no core count")
    loads = re.search(r"^- load average \(1, 5, 15 min\): ([\d.]+) [\d.]+ [\d.]+ at the start, "
                      r"([\d.]+) [\d.]+ [\d.]+ at the end$", page, re.M)
    check(loads is not None, "the load average line does not give three numbers at the start and the end")

    rows = [line for line in page.splitlines() if line.startswith("| ") and not line.startswith("| measurement")]
    cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in rows]
    check(len(cells) == len(EXPECTED), f"{len(cells)} rows, expected {len(EXPECTED)}")
    for start, size in EXPECTED:
        matching = [c for c in cells if c[0].startswith(start) and size in c[1]]
        check(len(matching) == 1, f"{len(matching)} rows for '{start}' at '{size}', expected 1")
    for c in cells:
        if len(c) != 6:
            failures.append(f"row '{c[0]}' has {len(c)} cells, expected 6")
            continue
        what = f"{c[0]} ({c[1]})"
        value, base, ratio = number(c[2], what), number(c[4], what + ", baseline"), number(c[5], what + ", ratio")
        check(c[3] != "", f"{what}: no baseline named")
        if None in (value, base, ratio):
            continue
        # Four significant digits each: the printed ratio is value / baseline within their rounding.
        check(abs(ratio - value / base) <= 2e-3 * ratio, f"{what}: ratio {ratio} is not {value} / {base}")
        if c[0].startswith("relative force error"):
            check(value < 0.05 and base < 0.05, f"{what}: errors {value}, {base} are not those of θ = 0.5")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", required=True, help="the build folder with the bench programs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kanoko-speed-table-test-") as tmp:
        out = Path(tmp) / "speed.md"
        proc = subprocess.run([sys.executable, str(GENERATOR), "--quick", "--build", args.build, "--out", str(out),
                               "--logs", str(Path(tmp) / "logs")], capture_output=True, text=True)
        sys.stderr.write(proc.stderr)
        if proc.returncode != 0:
            print(f"FAILED: {GENERATOR} --quick exited with {proc.returncode}")
            return 1
        page = out.read_text()
        check_page(page)
        # A bench that fails leaves no page: a build folder without the benches.
        missing = Path(tmp) / "not-written.md"
        bad = subprocess.run([sys.executable, str(GENERATOR), "--quick", "--build", str(Path(tmp) / "no-build"),
                              "--out", str(missing)], capture_output=True, text=True)
        check(bad.returncode != 0, "the generator succeeded without the benches")
        check(not missing.exists(), "the generator wrote a page without the benches")
        check("speed-table: error:" in bad.stderr and "kanoko_bench_forces" in bad.stderr,
              f"no one-line error naming the missing bench: {bad.stderr.strip()}")
    if failures:
        print(page)
        for f in failures:
            print(f"FAILED: {f}")
        return 1
    print(f"ok: {len(EXPECTED)} rows, ratios = figure / baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
