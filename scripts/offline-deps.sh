#!/usr/bin/env bash
# Downloads the Debian packages hadron's build needs into .deps/ and unpacks them there, so a
# machine without network and without these -dev packages (a GPU machine, say)
# can configure with `source .deps/env.sh` (CMAKE_PREFIX_PATH, PKG_CONFIG_PATH).
# Run where apt can reach Debian's registry; rerunning replaces .deps/.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
deps=$root/.deps

# Header-only packages, plus the shared libraries the image lacks (fmt's CMake package
# checks that libfmt.so exists even when only fmt::fmt-header-only is used).
packages=(
  libfmt-dev libfmt9
  nlohmann-json3-dev
  libcli11-dev
  libcpp-httplib-dev libcpp-httplib0.11
  libbrotli-dev  # cpp-httplib.pc requires libbrotli*.pc; httplib.h includes its headers
  libpcre2-dev libpcre2-8-0 libpcre2-16-0 libpcre2-32-0 libpcre2-posix3
  libutf8proc-dev libutf8proc2
  liburing-dev liburing2 libxxhash-dev libxxhash0  # the KV offload's disk tier
  libgtest-dev googletest
  pkgconf pkgconf-bin libpkgconf3  # CMake's FindPkgConfig, for images without pkg-config
)

rm -rf "$deps"
mkdir -p "$deps/debs"
(cd "$deps/debs" && apt-get download "${packages[@]}")
for deb in "$deps"/debs/*.deb; do dpkg-deb -x "$deb" "$deps"; done
# Documentation and googletest's sources: not needed to build, and the copy travels to the GPU
# machine inside its size limit.
rm -rf "$deps/debs" "$deps/usr/share/doc" "$deps/usr/share/man" "$deps/usr/src"
# Static archives other than googletest's, and PCRE2's 16- and 32-bit libraries: hadron links
# the shared 8-bit one.
find "$deps/usr/lib" \( -name '*.a' ! -name 'libgtest*' ! -name 'libgmock*' \) -delete
find "$deps/usr/lib" \( -name 'libpcre2-16*' -o -name 'libpcre2-32*' \) -delete

# pkg-config files name prefix=/usr; make them relative to where they now live.
for pc in "$deps"/usr/lib/*/pkgconfig/*.pc "$deps"/usr/share/pkgconfig/*.pc; do
  [[ -e $pc ]] || continue
  sed -i 's|^prefix=/usr$|prefix=${pcfiledir}/../../..|' "$pc"
  case $pc in */share/pkgconfig/*) sed -i 's|^prefix=${pcfiledir}/../../..$|prefix=${pcfiledir}/../..|' "$pc" ;; esac
done

# Sourced by scripts/gpu-check.sh (paths relative to the checkout, which moves between machines).
cat > "$deps/env.sh" <<'ENV'
deps_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
multiarch=$(ls "$deps_dir/usr/lib" | grep -- -linux-gnu | head -n1)
export CMAKE_PREFIX_PATH=$deps_dir/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
export PKG_CONFIG_PATH=$deps_dir/usr/lib/$multiarch/pkgconfig:$deps_dir/usr/share/pkgconfig
export LD_LIBRARY_PATH=$deps_dir/usr/lib/$multiarch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
command -v pkg-config >/dev/null || export PATH=$deps_dir/usr/bin:$PATH
ENV
# The same, compressed (about 1 MB): what to carry to a machine whose copy limit is tight;
# scripts/gpu-check.sh unpacks it when .deps/ is absent.
tar -C "$root" -cJf "$root/.deps.tar.xz" .deps
du -sh "$deps" "$root/.deps.tar.xz"
echo "unpacked ${#packages[@]} packages into $deps; use: source $deps/env.sh"
