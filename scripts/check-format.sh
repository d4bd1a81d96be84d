#!/usr/bin/env bash
# Checks that every tracked C++/CUDA source is in clang-format's form (.clang-format: Google,
# 100 columns); --fix rewrites the files instead. Exits 77 (ctest's "skipped") where
# clang-format or the git checkout is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "check-format: clang-format not installed"; exit 77; }
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "check-format: not a git checkout"; exit 77; }
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! clang-format --dry-run --Werror "${files[@]}" 2> "$log"; then
  grep -E '^[^ ].*:[0-9]+:[0-9]+: error:' "$log" | sed -E 's/:[0-9]+:[0-9]+: error:.*//' | sort -u
  echo "check-format: the files above are not in the form of $(clang-format --version);" \
    "scripts/check-format.sh --fix rewrites them (the tree is kept in Debian 12's, 14.0.6)"
  exit 1
fi
echo "check-format: ${#files[@]} files in clang-format's form"
