#!/usr/bin/env bash
# Installs the Debian packages hadron needs and builds it into build/ (Release). Safe to re-run:
# installs only what is missing, rebuilds incrementally.
#
#   scripts/setup.sh          the CLI alone (build/hadron), with the CUDA backend only where a
#                             GPU is visible and nvcc is installed
#   scripts/setup.sh --all    everything the tests need, the CUDA backend compiled wherever
#                             nvcc is installed (sm_90a; compile-only without a GPU)
#
# HADRON_CUDA=ON|OFF in the environment overrides the choice of the CUDA backend.
set -euo pipefail
cd "$(dirname "$0")/.."

all=false
[[ ${1:-} == --all ]] && all=true

# Libraries, checked as Debian packages.
packages=(libfmt-dev nlohmann-json3-dev libcli11-dev libcpp-httplib-dev libpcre2-dev libutf8proc-dev
          liburing-dev libxxhash-dev)
# Tools, checked as commands (a machine may have them from elsewhere, e.g. Node.js).
declare -A tool_packages=([cmake]=cmake [ninja]=ninja-build [g++]=g++ [pkg-config]=pkg-config
                          [ccache]=ccache)
if $all; then
  packages+=(libgtest-dev googletest libbenchmark-dev
             libclang-rt-14-dev  # libFuzzer runtime
             python3-dev pybind11-dev python3-pytest  # the Python package and its tests,
             python3-venv python3-setuptools python3-wheel  # with its offline pip install
             json-schema-test-suite)  # tests/grammar: schemas and instances
  tool_packages+=([git]=git [clang++]=clang [node]=nodejs [npm]=npm [clang-format]=clang-format)
fi

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
for tool in "${!tool_packages[@]}"; do
  command -v "$tool" >/dev/null || missing+=("${tool_packages[$tool]}")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q --no-install-recommends \
    "${missing[@]}"
fi

# nvcc is often installed outside PATH.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
has_gpu() { command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; }
if [[ -n ${HADRON_CUDA:-} ]]; then
  cuda=$HADRON_CUDA
elif $all || has_gpu; then
  cuda=ON
else
  cuda=OFF  # kernels this machine cannot run are not worth minutes of compiling
fi

tests=OFF
targets=(--target hadron)
if $all; then
  tests=ON
  targets=()
fi
cmake --preset release -DHADRON_CUDA="$cuda" -DHADRON_TESTS="$tests" >/dev/null
echo "setup: building $($all && echo everything || echo build/hadron)" \
  "($([[ $cuda == ON ]] && command -v nvcc >/dev/null && echo "with" || echo "without") the CUDA backend)"
cmake --build --preset release -j "$(nproc)" "${targets[@]}"
echo "setup: built $(pwd)/build/hadron"
