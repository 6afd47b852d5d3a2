#!/bin/sh
# Regenerates smpi-farm.trace and smpi-farm-sizes.trace (Debian libsimgrid-dev 3.32) from
# smpi-farm.c: a task farm whose master receives with MPI_ANY_TAG, then a bcast, an allreduce and
# a barrier, on 4 ranks of traces/simgrid/ring5-platform.xml. smpi-farm.trace has no computing
# states and no message sizes; smpi-farm-sizes.trace has both. Run from this folder.
set -eu
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
smpicc -O1 smpi-farm.c -o "$work/farm"
printf 'h0\nh1\nh2\nh3\n' > "$work/hosts"
platform=../../../traces/simgrid/ring5-platform.xml
smpirun -np 4 -platform "$platform" -hostfile "$work/hosts" --cfg=smpi/host-speed:1Gf \
  --cfg=tracing:yes --cfg=tracing/filename:smpi-farm.trace --cfg=tracing/smpi:yes "$work/farm" > "$work/log" 2>&1
smpirun -np 4 -platform "$platform" -hostfile "$work/hosts" --cfg=smpi/host-speed:1Gf \
  --cfg=tracing:yes --cfg=tracing/filename:smpi-farm-sizes.trace --cfg=tracing/smpi:yes \
  --cfg=tracing/smpi/computing:yes --cfg=tracing/smpi/display-sizes:yes "$work/farm" > "$work/log" 2>&1
