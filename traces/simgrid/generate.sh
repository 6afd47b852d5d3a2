#!/bin/sh
# Regenerates the SimGrid SMPI traces of this folder (Debian libsimgrid-dev 3.32): one token round
# on a ring of MPI ranks, traced with the platform (tracing/platform:yes), so that each trace holds
# the platform graph as Pajé links of value "topology". Run from this folder; writes ring5.trace
# and torus8.trace. The traces' time stamps do not depend on the machine (fixed host speed).
set -eu
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
smpicc -O1 ring.c -o "$work/ring"
printf 'h0\nh1\nh2\nh3\nh4\n' > "$work/ring5-hosts"
for i in 0 1 2 3 4 5 6 7; do echo "n$i"; done > "$work/torus8-hosts"
# ring5: without display-sizes, so that pj_dump reads it (counts are compared in the tests).
smpirun -np 5 -platform ring5-platform.xml -hostfile "$work/ring5-hosts" --cfg=smpi/host-speed:1Gf \
  --cfg=tracing:yes --cfg=tracing/filename:ring5.trace --cfg=tracing/smpi:yes \
  --cfg=tracing/smpi/computing:yes --cfg=tracing/platform:yes --cfg=tracing/uncategorized:yes \
  "$work/ring" > "$work/ring5.log" 2>&1
# torus8: with display-sizes, where SimGrid 3.32 writes the topology links' StartLink without the
# Size field its header declares (pj_dump refuses the file; Kanoko reads it with size 0).
smpirun -np 8 -platform torus8-platform.xml -hostfile "$work/torus8-hosts" --cfg=smpi/host-speed:1Gf \
  --cfg=tracing:yes --cfg=tracing/filename:torus8.trace --cfg=tracing/smpi:yes \
  --cfg=tracing/smpi/computing:yes --cfg=tracing/smpi/display-sizes:yes --cfg=tracing/platform:yes \
  "$work/ring" > "$work/torus8.log" 2>&1
