#!/bin/sh
# CPU time and wall time of `kanoko simulate` as one process and as 2 MPI ranks on this machine
# (issue 15 point 5: 2 ranks together may use at most 1.4x one process's CPU time), and whether
# the trajectories are the same bytes. Usage:
#   bench/bench_mpi.sh [KANOKO] [BODIES] [INTERVALS]     (defaults: build/src/cli/kanoko 20000 10)
# Prints one line per run: wall s, CPU s (user + system, of every process), and the CPU ratio to
# the one-process run with the same total number of threads.
set -eu
mapping=$(dirname "$0")/../mappings/ring.toml  # springs, repulsion (Barnes-Hut above 2 048 bodies), pulls, friction
kanoko=${1:-build/src/cli/kanoko}
bodies=${2:-20000}
intervals=${3:-10}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader

# A ring of ranks exchanging with neighbours and across the ring, with loads (native format).
awk -v n="$bodies" -v k="$intervals" 'BEGIN {
  print "kntr 1"
  for (i = 0; i < n; i++) print "node 0 " i
  for (b = 0; b < k; b++) {
    t = b / 10 + 0.01
    for (i = 0; i < n; i += 3) printf "load %.2f %d 0.%d\n", t, i, (i * 7 + b) % 9 + 1
    for (i = 0; i < n; i += 2) printf "msg %.2f %d %d %d\n", t, i, (i + 1 + ((i + b) % 2) * int(n / 2)) % n, (i * 13 + b) % 1000 + 1
  }
  printf "end %.1f\n", k / 10
}' > "$dir/t.kntr"

# run NAME COMMAND...: wall and CPU seconds of COMMAND and its children.
run() {
  name=$1
  shift
  /usr/bin/time -f "%e %U %S" -o "$dir/time" "$@" "$dir/t.kntr" --mapping "$mapping" -o "$dir/$name.kntj" -q -f
  read -r wall user system < "$dir/time"
  cpu=$(awk -v u="$user" -v s="$system" 'BEGIN { print u + s }')
  echo "$name $wall $cpu"
}

echo "kanoko simulate, $bodies bodies, $intervals intervals ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
one1=$(run one-1thread "$kanoko" simulate -j 1)
one2=$(run one-2threads "$kanoko" simulate -j 2)
mpi2=$(run mpi-2ranks mpirun --oversubscribe -np 2 "$kanoko" simulate -j 1)
cpu_of() { echo "$1" | cut -d' ' -f3; }
printf "%-13s %8s %8s %s\n" run "wall s" "CPU s" "CPU ratio"
for line in "$one1" "$one2" "$mpi2"; do
  set -- $line
  awk -v name="$1" -v wall="$2" -v cpu="$3" -v c1="$(cpu_of "$one1")" -v c2="$(cpu_of "$one2")" \
    'BEGIN { printf "%-13s %8.2f %8.2f %.2fx of one-1thread, %.2fx of one-2threads\n", name, wall, cpu, cpu / c1, cpu / c2 }'
done
for name in one-2threads mpi-2ranks; do
  if cmp -s "$dir/one-1thread.kntj" "$dir/$name.kntj"; then echo "$name: same bytes as one-1thread"; else echo "$name: BYTES DIFFER"; fi
done
