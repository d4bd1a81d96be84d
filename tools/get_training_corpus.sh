#!/usr/bin/env bash
# Extracts the training corpus of models/default (the King James Bible, public domain) from
# Debian's bible-kjv-text and bible-kjv packages into .train-data/kjv.txt, one verse a line
# ("Ge1:1 In the beginning ..."). The packages store the text compressed for the `bible`
# program, so the program itself (bible-kjv) dumps it. Needs apt-get and dpkg-deb; installs
# nothing. The corpus is not committed: .train-data/ is ignored through .git/info/exclude.
#
# Usage: tools/get_training_corpus.sh   (from the repository root)
set -euo pipefail

repo_root="$(cd "$(dirname "$0")/.." && pwd)"
out_dir="$repo_root/.train-data"
work_dir="$(mktemp -d)"
trap 'rm -rf "$work_dir"' EXIT

grep -qxF '/.train-data/' "$repo_root/.git/info/exclude" 2>/dev/null ||
  echo '/.train-data/' >>"$repo_root/.git/info/exclude"

chmod 777 "$work_dir"  # apt-get download writes as the _apt user
cd "$work_dir"
apt-get download bible-kjv-text bible-kjv >/dev/null
for deb in bible-kjv-text_*.deb bible-kjv_*.deb; do dpkg-deb -x "$deb" root; done
mkdir -p "$out_dir"
root/usr/bin/bible -f -p "$work_dir/root/usr/lib" Gen1:1-Rev22:21 >"$out_dir/kjv.txt"

n_verses=$(wc -l <"$out_dir/kjv.txt")
if [ "$n_verses" -ne 31102 ]; then
  echo "expected 31102 verses, got $n_verses" >&2
  exit 1
fi
{
  echo "packages: $(ls bible-kjv-text_*.deb bible-kjv_*.deb | tr '\n' ' ')"
  echo "sha256: $(sha256sum "$out_dir/kjv.txt" | cut -d' ' -f1)"
} | tee "$out_dir/SOURCE"
