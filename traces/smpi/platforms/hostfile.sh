#!/bin/sh
# Prints a hostfile for N ranks on a platform of this folder: the first N hosts of its cluster,
# one per line, in the cluster's order (prefix, number from radical "A-B", suffix).
#   hostfile.sh PLATFORM.xml N
set -eu
if [ $# -ne 2 ]; then echo "usage: hostfile.sh PLATFORM.xml RANKS" >&2; exit 2; fi
platform=$1 n=$2
cluster=$(tr '\n' ' ' < "$platform" | sed -n 's/.*<cluster\([^>]*\)>.*/\1/p')
attr() { printf '%s\n' "$cluster" | sed -n "s/.* $1=\"\\([^\"]*\\)\".*/\\1/p"; }
prefix=$(attr prefix) suffix=$(attr suffix) radical=$(attr radical)
first=${radical%-*} last=${radical#*-}
case "$first$last$n" in *[!0-9]*|'') echo "$platform: no cluster with a radical A-B, or bad rank count $n" >&2; exit 2;; esac
if [ "$n" -lt 1 ] || [ "$n" -gt $((last - first + 1)) ]; then
  echo "$platform: $n ranks do not fit on its $((last - first + 1)) hosts" >&2; exit 2
fi
i=0
while [ "$i" -lt "$n" ]; do echo "$prefix$((first + i))$suffix"; i=$((i + 1)); done
