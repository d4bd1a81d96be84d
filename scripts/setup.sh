#!/usr/bin/env bash
# Installs the Debian packages hadron needs and builds it into build/ (Release, CUDA backend
# when nvcc is found). Safe to re-run: installs only what is missing, rebuilds incrementally.
set -euo pipefail
cd "$(dirname "$0")/.."

# Libraries, checked as Debian packages.
packages=(
  libfmt-dev nlohmann-json3-dev libcli11-dev libcpp-httplib-dev libpcre2-dev libutf8proc-dev
  libgtest-dev googletest libbenchmark-dev
  libclang-rt-14-dev          # libFuzzer runtime
)
# Tools, checked as commands (a machine may have them from elsewhere, e.g. Node.js).
declare -A tool_packages=(
  [cmake]=cmake [ninja]=ninja-build [g++]=g++ [pkg-config]=pkg-config [ccache]=ccache
  [git]=git [clang++]=clang [node]=nodejs [npm]=npm [clang-format]=clang-format
)

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

cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
echo "setup: built $(pwd)/build/hadron"
