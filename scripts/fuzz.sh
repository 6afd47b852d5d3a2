#!/usr/bin/env bash
# Runs every libFuzzer target and the whole-program mutation harness for a given time each, and
# exits non-zero on any finding (tests/fuzz/README.md).
#
#   scripts/fuzz.sh [--time SECONDS] [--targets a,b,...] [--harness-only | --libfuzzer-only]
#                   [--build-dir DIR] [--harness-build DIR] [--work DIR] [--seed N] [--strict]
#
# --time          seconds for each libFuzzer target and for the harness (default 60)
# --targets       libFuzzer targets to run (default: all; names as in tests/fuzz/targets.cpp)
# --build-dir     the clang fuzz build tree (default build-fuzz; configured and built here)
# --harness-build the ordinary build tree holding kanoko and kanoko_mutate (default build;
#                 configured if absent, the two targets built here)
# --work          corpus and artifacts (default ${XDG_CACHE_HOME:-~/.cache}/kanoko-fuzz)
# --seed          random seed of libFuzzer and the harness (default: the clock); CI gives a fixed
#                 one so that a run is repeatable on any machine
# --strict        an unlocated error found by the harness is a finding too
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

time_s=60
targets="native_trace,paje,chrome,mapping,trajectory,paraver,simgrid_ti,otf2,views,viewer_files"
run_libfuzzer=1 run_harness=1 strict=()
build=build-fuzz harness_build=build
work="${XDG_CACHE_HOME:-$HOME/.cache}/kanoko-fuzz"
seed=""
usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --time) time_s=${2:?}; shift 2 ;;
    --targets) targets=${2:?}; shift 2 ;;
    --harness-only) run_libfuzzer=0; shift ;;
    --libfuzzer-only) run_harness=0; shift ;;
    --build-dir) build=${2:?}; shift 2 ;;
    --harness-build) harness_build=${2:?}; shift 2 ;;
    --work) work=${2:?}; shift 2 ;;
    --seed) seed=${2:?}; shift 2 ;;
    --strict) strict=(--strict); shift ;;
    -h|--help) usage ;;
    *) echo "fuzz.sh: unknown option '$1'" >&2; usage ;;
  esac
done
if [ -n "$seed" ] && ! [[ "$seed" =~ ^[0-9]+$ ]]; then
  echo "fuzz.sh: --seed needs a whole number" >&2
  exit 2
fi
if ! [[ "$time_s" =~ ^[0-9]+$ ]] || [ "$time_s" -eq 0 ]; then
  echo "fuzz.sh: --time needs a positive whole number of seconds" >&2
  exit 2
fi
IFS=',' read -r -a target_list <<<"$targets"
for t in "${target_list[@]}"; do
  [ -d "tests/fuzz/seeds/$t" ] || { echo "fuzz.sh: unknown target '$t' (no tests/fuzz/seeds/$t)" >&2; exit 2; }
done

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
stamp=$(date -u +%Y%m%d-%H%M%S)
artifacts="$work/artifacts/$stamp"
mkdir -p "$artifacts"
findings=0
rows=()

if [ "$run_libfuzzer" = 1 ]; then
  echo "== fuzz build ($build, clang + libFuzzer + ASan/UBSan)"
  if [ ! -f "$build/build.ninja" ]; then
    cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DKANOKO_FUZZ=ON -DKANOKO_SANITIZE=ON -DKANOKO_SCENE=OFF -DKANOKO_TESTS=OFF -DKANOKO_BENCH=OFF \
      "${launcher[@]}" >/dev/null
  fi
  cmake --build "$build" -j"$(nproc)" --target "${target_list[@]/#/fuzz_}"
  for t in "${target_list[@]}"; do
    corpus="$work/corpus/$t"
    mkdir -p "$corpus"
    args=(-max_total_time="$time_s" -rss_limit_mb=4096 -timeout=25 -print_final_stats=1
          -artifact_prefix="$artifacts/$t-")
    [ -z "$seed" ] || args+=(-seed="$seed")
    case "$t" in
      native_trace|views) args+=(-dict=tests/fuzz/native_trace.dict) ;;
      mapping) args+=(-dict=tests/fuzz/mapping.dict) ;;
      otf2) args+=(-malloc_limit_mb=1048576) ;;
    esac
    extra=("tests/fuzz/seeds/$t")
    [ -d "tests/fuzz/regressions/$t" ] && extra+=("tests/fuzz/regressions/$t")
    log="$artifacts/$t.log"
    echo "== $t (${time_s} s)"
    status=0
    # libotf2 trusts sizes in the file and handles a failed malloc itself; its own small leaks on
    # corrupted records are suppressed (tests/lsan.supp).
    ASAN_OPTIONS=allocator_may_return_null=$([ "$t" = otf2 ] && echo 1 || echo 0) \
    LSAN_OPTIONS=suppressions=$root/tests/lsan.supp:print_suppressions=0 \
      "$build/tests/fuzz/fuzz_$t" "${args[@]}" "$corpus" "${extra[@]}" >"$log" 2>&1 || status=$?
    execs=$(awk '/^stat::number_of_executed_units:/ { v = $2 } END { print v }' "$log")
    added=$(awk '/^stat::new_units_added:/ { v = $2 } END { print v }' "$log")
    found=$(find "$artifacts" -maxdepth 1 -type f -name "$t-*" | wc -l)
    if [ "$status" -ne 0 ] || [ "$found" -gt 0 ]; then
      findings=$((findings + 1))
      [ "$found" -gt 0 ] || found="exit $status"
      echo "   finding: see $log"
      tail -n 20 "$log" | sed 's/^/   | /'
    fi
    rows+=("$(printf '%-14s %10s %10s %8s' "$t" "${execs:-?}" "${added:-?}" "$found")")
  done
fi

harness_status=0
if [ "$run_harness" = 1 ]; then
  echo "== mutation harness ($harness_build, ${time_s} s)"
  if [ ! -f "$harness_build/build.ninja" ]; then
    cmake -S . -B "$harness_build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKANOKO_SCENE=OFF -DKANOKO_BENCH=OFF \
      "${launcher[@]}" >/dev/null
  fi
  cmake --build "$harness_build" -j"$(nproc)" --target kanoko kanoko_mutate
  "$harness_build/tests/fuzz/kanoko_mutate" --kanoko "$harness_build/src/cli/kanoko" --source "$root" \
    --time "$time_s" --jobs 2 --seed "${seed:-$(date +%s)}" --work "$work/harness-work" --artifacts "$artifacts/harness" \
    "${strict[@]}" | tee "$artifacts/harness.log" || harness_status=$?
  [ "$harness_status" -eq 0 ] || findings=$((findings + 1))
fi

echo
echo "== summary"
printf '%-14s %10s %10s %8s\n' target execs "new units" crashes
for r in "${rows[@]}"; do echo "$r"; done
if [ "$run_harness" = 1 ]; then
  printf '%-14s %s\n' harness "$(grep '^total' "$artifacts/harness.log" | sed 's/^total *//') (runs, then per class as above)"
fi
if [ "$findings" -gt 0 ]; then
  echo "fuzz.sh: $findings finding(s); artifacts:"
  find "$artifacts" -mindepth 1 -maxdepth 3 ! -name '*.log' | sort | sed 's/^/  /'
  exit 1
fi
echo "fuzz.sh: no findings (logs in $artifacts)"
