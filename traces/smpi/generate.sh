#!/bin/sh
# Runs one of this folder's MPI programs under SimGrid SMPI (Debian libsimgrid-dev 3.32) on one of
# the platforms in platforms/ and writes its Pajé trace; without arguments, regenerates the small
# traces shipped in this folder (traces/README.md lists them with the truth each one encodes).
# Durations do not depend on the machine: the programs' work is smpi_execute_flops() on 1 Gflop/s
# hosts, and the C code between MPI calls costs nothing (smpi/simulate-computation:no).
# Line 2 of a trace (SimGrid's command line) names the temporary build folder as TMP, so a run
# rewrites its file byte for byte. Run `generate.sh --help` for the options.
set -eu
here=$(cd "$(dirname "$0")" && pwd)

usage() {
  cat <<'USAGE'
usage: generate.sh                      regenerate the shipped traces in traces/smpi/
       generate.sh -p PROGRAM -o OUT.trace [options] [-- program options]

  -p, --program P     pipeline | farm | halo2d | halo3d | alltoall | late
  -n, --ranks N       MPI ranks (default: pipeline 8, farm 8, halo2d 16, halo3d 27, alltoall 8)
      --platform X    flat | torus | fattree (platforms/X.xml, 64 hosts each) or an XML file
                      whose first <cluster> has a radical "A-B" (default: flat)
      --sizes         message sizes in the trace (tracing/smpi/display-sizes:yes)
      --no-computing  no `computing` states (default: tracing/smpi/computing:yes)
      --internals     the messages inside collectives (tracing/smpi/internals:yes)
      --resources     the platform and its use too (tracing/platform:yes, tracing/uncategorized:yes)
      --locations     the file and line of every MPI call (smpicc -trace-call-location,
                      smpi/trace-call-location:yes): PushState's Fname and Lnumber
      --scale S       short (default; tens of ms simulated) or long (10x the iterations, 100x the
                      work per iteration: tens of s simulated)
      --work-scale F  multiply all computation by F, communication unchanged (heavy runs)
  -o, --output F      the trace to write (written whole or not at all)
  -h, --help          this text
Program options after `--` go to the program (see the comment at the top of each .c file).
USAGE
}

die() { echo "generate.sh: $*" >&2; exit 2; }

# run PROGRAM RANKS PLATFORM OUTPUT SIZES COMPUTING INTERNALS RESOURCES SCALE WORK_SCALE LOCATIONS [ARGS...]
run() {
  program=$1 ranks=$2 platform=$3 output=$4 sizes=$5 computing=$6 internals=$7 resources=$8
  scale=$9 work_scale=${10} locations=${11}
  shift 11
  case "$platform" in */*|*.xml) ;; *) platform="$here/platforms/$platform.xml" ;; esac
  [ -f "$platform" ] || die "no platform file $platform"
  case "$program" in
    pipeline) source=pipeline.c args="" iters=--items long_iters=200 ;;
    farm) source=farm.c args="" iters=--tasks long_iters=600 ;;
    halo2d) source=halo.c args="--dims 2" iters=--iters long_iters=100 ;;
    halo3d) source=halo.c args="--dims 3" iters=--iters long_iters=100 ;;
    alltoall) source=alltoall.c args="" iters=--iters long_iters=100 ;;
    late) source=late.c args="" iters=--iters long_iters=30 ;;
    *) die "unknown program '$program' (pipeline, farm, halo2d, halo3d, alltoall, late)" ;;
  esac
  case "$scale" in
    short) ;;
    long) args="$args $iters $long_iters" work_scale=$(awk "BEGIN { print 100 * $work_scale }") ;;
    *) die "--scale must be short or long, not '$scale'" ;;
  esac
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  cp "$platform" "$work/platform.xml"
  "$here/platforms/hostfile.sh" "$platform" "$ranks" > "$work/hosts"
  binary=${source%.c}
  location_flag=""
  if [ "$locations" = yes ]; then location_flag=-trace-call-location; fi
  # $location_flag is empty or one word.
  # shellcheck disable=SC2086
  (cd "$here" && smpicc -O1 -w $location_flag "$source" -o "$work/$binary") > "$work/build.log" 2>&1 ||
    { cat "$work/build.log" >&2; die "smpicc failed on $source"; }
  # $args is split on purpose: it holds the program's own options ("--dims 2 --iters 100").
  # shellcheck disable=SC2086
  set -- --cfg=smpi/host-speed:1Gf --cfg=smpi/simulate-computation:no \
    --cfg=tracing:yes --cfg=tracing/filename:trace --cfg=tracing/smpi:yes \
    --cfg=tracing/smpi/computing:"$computing" --cfg=tracing/smpi/display-sizes:"$sizes" \
    --cfg=tracing/smpi/internals:"$internals" --cfg=tracing/platform:"$resources" \
    --cfg=tracing/uncategorized:"$resources" "./$binary" $args --work-scale "$work_scale" "$@"
  # Only with --locations, so that the other traces' command line (line 2) stays as it was.
  if [ "$locations" = yes ]; then set -- --cfg=smpi/trace-call-location:yes "$@"; fi
  if ! (cd "$work" && smpirun -np "$ranks" -platform platform.xml -hostfile hosts "$@") > "$work/run.log" 2>&1; then
    tail -n 20 "$work/run.log" >&2
    die "smpirun failed: $program on $ranks ranks ($platform)"
  fi
  # The temporary folder's name would change the trace from run to run.
  sed "2s|$work|TMP|g" "$work/trace" > "$work/trace.fixed"
  mv "$work/trace.fixed" "$output.tmp.$$"
  mv "$output.tmp.$$" "$output"
  rm -rf "$work"
  trap - EXIT
}

if [ $# -eq 0 ]; then
  # The shipped traces (traces/README.md): one per program, short scale, mixed options.
  cd "$here"
  run pipeline 8 flat pipeline8-flat.trace yes yes no no short 1 no
  run farm 8 fattree farm8-fattree.trace no yes no no short 1 no
  run farm 8 fattree farm8-anytag.trace yes yes no no short 1 no --any-tag
  run halo2d 16 torus halo2d-16-torus.trace yes yes no no short 1 no
  run halo2d 16 torus halo2d-16-slow5.trace yes yes no no short 1 no --skew 1 --slow-rank 5 --slow-factor 3
  run halo3d 27 torus halo3d-27-torus-light.trace yes yes no no short 1 no
  run halo3d 27 torus halo3d-27-torus-heavy.trace yes yes no no short 5 no
  run alltoall 8 fattree alltoall8-fattree.trace no yes no no short 1 no --loaded 5
  run pipeline 8 torus pipeline8-resources.trace no yes no yes short 1 no
  run late 4 flat late4-locations.trace yes yes no no short 1 yes
  exit 0
fi

program="" ranks="" platform=flat output="" sizes=no computing=yes internals=no resources=no
scale=short work_scale=1 locations=no
while [ $# -gt 0 ]; do
  case "$1" in
    -p|--program) [ $# -ge 2 ] || die "$1 needs a value"; program=$2; shift 2 ;;
    -n|--ranks) [ $# -ge 2 ] || die "$1 needs a value"; ranks=$2; shift 2 ;;
    --platform) [ $# -ge 2 ] || die "$1 needs a value"; platform=$2; shift 2 ;;
    --sizes) sizes=yes; shift ;;
    --no-computing) computing=no; shift ;;
    --internals) internals=yes; shift ;;
    --resources) resources=yes; shift ;;
    --locations) locations=yes; shift ;;
    --scale) [ $# -ge 2 ] || die "$1 needs a value"; scale=$2; shift 2 ;;
    --work-scale) [ $# -ge 2 ] || die "$1 needs a value"; work_scale=$2; shift 2 ;;
    -o|--output) [ $# -ge 2 ] || die "$1 needs a value"; output=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
[ -n "$program" ] || die "no --program (see --help)"
[ -n "$output" ] || die "no --output (see --help)"
case "$work_scale" in ''|*[!0-9.e+-]*) die "--work-scale needs a number, not '$work_scale'" ;; esac
if [ -z "$ranks" ]; then
  case "$program" in halo2d) ranks=16 ;; halo3d) ranks=27 ;; *) ranks=8 ;; esac
fi
case "$output" in /*) ;; *) output="$(pwd)/$output" ;; esac
run "$program" "$ranks" "$platform" "$output" "$sizes" "$computing" "$internals" "$resources" \
  "$scale" "$work_scale" "$locations" "$@"
