#!/usr/bin/env bash
# The main job: set up (packages + build) once, then run `hadron` with the given arguments.
# With no --model, hadron uses the small model shipped in models/default/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >&2
if [ $# -eq 0 ]; then set -- generate --prompt "And God said" --max-tokens 64; fi
exec build/hadron "$@"
