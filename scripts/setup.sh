#!/usr/bin/env bash
# Installs the Debian packages hadron needs and builds it into build/ (Release, CUDA backend
# when nvcc is found). Safe to re-run: installs only what is missing, rebuilds incrementally.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake ninja-build g++ pkg-config ccache git
  libfmt-dev nlohmann-json3-dev libcli11-dev libcpp-httplib-dev libpcre2-dev libutf8proc-dev
  libgtest-dev googletest libbenchmark-dev
  clang libclang-rt-14-dev    # libFuzzer targets
  nodejs npm                  # reference tokenizers and API clients in the tests
)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
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
