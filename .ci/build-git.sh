#!/usr/bin/env bash
# Build a current git (Debian 13 "trixie"'s source package) into a cache directory, once; print its bin dir.
#
#   gitbin=$(.ci/build-git.sh) && PATH="$gitbin:$PATH" ...
#
# The build is cached in $CARRYTOOL_GIT_CACHE (default ~/.cache/carrytool-ci/git-trixie): later runs
# only print the path. Needs apt-get with a deb-src entry for trixie (added when missing, as root), the
# network to the Debian archive, and a C toolchain with zlib headers. When any of that is missing it
# says why on stderr and exits non-zero: the caller decides (.ci/run warns loudly and goes on).
# Binaries are never downloaded: git is compiled from the distribution's source package.
set -euo pipefail

cache="${CARRYTOOL_GIT_CACHE:-$HOME/.cache/carrytool-ci/git-trixie}"
say() { echo "build-git: $*" >&2; }

if [ -f "$cache/.complete" ] && "$cache/bin/git" --version >/dev/null 2>&1; then
    say "cached: $("$cache/bin/git" --version)"
    echo "$cache/bin"
    exit 0
fi

for tool in apt-get dpkg-source make cc; do
    command -v "$tool" >/dev/null 2>&1 || { say "no $tool on this machine: cannot build git from source"; exit 3; }
done
sudo=""
if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null && sudo="sudo -n" \
        || { say "not root and no password-less sudo: cannot add the deb-src entry or run apt-get"; exit 3; }
fi

sources=/etc/apt/sources.list.d/carrytool-trixie-src.sources
# Our own entry, whatever else is configured: "trixie" in a deb line plus a deb-src line for another
# release would make `apt-get source git` fetch that release's git (2.39 on bookworm).
has_trixie_src() {   # one file that names both deb-src and trixie (a one-line or a deb822 entry)
    grep -rlsZ trixie /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null | xargs -0r grep -lqs deb-src
}
if [ ! -f "$sources" ] && ! has_trixie_src; then
    say "adding a deb-src entry for trixie: $sources"
    printf '%s\n' "Types: deb-src" "URIs: http://deb.debian.org/debian" "Suites: trixie" "Components: main" \
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" | $sudo tee "$sources" >/dev/null
fi
$sudo apt-get update -qq >&2 || { say "apt-get update failed (no network to the Debian archive?)"; exit 4; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
apt-get source -qq --download-only git >&2 || { say "apt-get source git failed"; exit 4; }
dsc=$(ls git_*.dsc | head -1)
say "building $dsc into $cache (a few minutes)"
dpkg-source -x --no-check "$dsc" src >/dev/null
jobs=$(nproc 2>/dev/null || echo 2)
rm -rf "$cache"                # git bakes its prefix in: build in place; .complete marks a whole build
# CFLAGS=-O1, without git's default -g -O2: the build runs beside the first pass of the suite on a fresh CI
# machine, and -O1 without debug information takes 4 core-minutes there instead of 6 (2 cores, git 2.47.3),
# for a git that runs the suite's small repositories about as fast.
make -C src -j"$jobs" prefix="$cache" CFLAGS=-O1 NO_CURL=1 NO_GETTEXT=1 NO_TCLTK=1 NO_PERL=1 NO_PYTHON=1 \
    NO_EXPAT=1 install >"$work/build.log" 2>&1 || { tail -20 "$work/build.log" >&2; say "make failed"; exit 5; }
version=$("$cache/bin/git" --version | awk '{print $3}')
case "$version" in
    2.[0-3][0-9].*|1.*) say "built git $version, older than 2.40: not a current git"; exit 6 ;;
esac
touch "$cache/.complete"
say "built: $("$cache/bin/git" --version)"
echo "$cache/bin"
