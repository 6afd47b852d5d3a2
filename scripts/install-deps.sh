#!/usr/bin/env bash
# Installs the Debian 12 packages Kanoko needs to build, test and run (uses sudo when not root).
set -euo pipefail
packages=(
  cmake g++ ninja-build pkg-config
  libeigen3-dev libboost-program-options-dev libtoml11-dev libgtest-dev libbenchmark-dev
  libopenscenegraph-dev libgl-dev libegl-dev libgl1-mesa-dri libegl-mesa0
  xvfb xauth fonts-dejavu-core ffmpeg
  libopenmpi-dev openmpi-bin
  pajeng
  libsimgrid-dev  # smpicc/smpirun: traces/simgrid/generate.sh (SMPI traces with the platform)
  libopen-trace-format2-dev otf2-tools rapidjson-dev
  libcairo2-dev
  libmuparser-dev
  libre2-dev  # the mapping's patterns: linear-time matching
  libxxhash-dev  # the input hash (src/base/hash.hpp): XXH3 over every byte of the trace
  libdw-dev  # kanoko capture: call-site addresses → file:line:function (libdwfl)
  libopenal-dev libopenal-data
  assimp-utils  # tests/export: reads the glTF export back (assimp export x.glb x.assjson)
  libebur128-dev  # render --audio: EBU R128 loudness (integrated, true peak) for the -16 LUFS normalisation
  clang libclang-rt-14-dev  # scripts/fuzz.sh: libFuzzer (libclang_rt.fuzzer) and clang's sanitizers
  libjs-three  # kanoko share inlines three.js (and OrbitControls) into the page
  libcpp-httplib-dev  # kanoko serve
  libimgui-dev libstb-dev  # the viewer's interface (menus, timeline, help): Dear ImGui with its OpenGL 3 backend
  chromium chromium-driver python3-selenium  # tests/share: the shared page in headless Chromium
  eslint  # tests/share: lints src/web/page.js (Share.PageLint)
  zlib1g-dev liblzma-dev libzstd-dev gzip xz-utils zstd  # compressed traces; the commands make the tests' copies
  python3  # scripts/speed-table.py (docs/speed.md) and its test, tests/bench/test_speed_table.py
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages are installed"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
