#!/usr/bin/env bash
# The main job: set up (packages + build) once, then run `hadron` with the given arguments.
# With no --model, hadron uses the small model shipped in models/default/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >&2
exec build/hadron "${@:-generate}"
