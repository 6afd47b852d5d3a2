#!/usr/bin/env bash
# The new user's first command: install, build (Release), simulate the paper's Fibonacci example
# with ring load distribution, and show it (a window when a display is present, else a PNG).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DKANOKO_TESTS=OFF -DKANOKO_BENCH=OFF >/dev/null
cmake --build build-release -j"$(nproc)"
kanoko=build-release/src/cli/kanoko
mkdir -p out
"$kanoko" simulate traces/fib22-ring.kntr --mapping mappings/paper-fibonacci.toml -o out/fib22-ring.kntj
if [ -n "${DISPLAY:-}" ]; then
  echo "Opening the viewer (h lists the keys; space pauses; Esc quits)"
  "$kanoko" view out/fib22-ring.kntj
else
  "$kanoko" render out/fib22-ring.kntj --frame 2.0 -o out/fib22-ring.png
  echo "No display: rendered the scene at t = 2.0 s to $(pwd)/out/fib22-ring.png"
  echo "(with a display, run: $kanoko view out/fib22-ring.kntj)"
fi
