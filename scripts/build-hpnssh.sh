#!/bin/sh
# Build HPN-SSH 18.8.0 (OpenSSH 10.2p1 with the HPN patches) from the vendored source into a private prefix, for
# the HPN tests and for `sshbench run --ssh PREFIX/bin/hpnssh --sshd PREFIX/sbin/hpnsshd`.
#
# Nothing system-wide changes: it installs into the cache dir only, and is configured to use Debian's own
# privilege-separation user and directory (sshd, /run/sshd), so no account is created. Cached: a second run does
# nothing. No source, or no build tools (autoreconf, make, cc, OpenSSL's and zlib's headers): one line, exit 0,
# and the tests that need it skip. About 75 s on a 2-core VM.
#
# Prints the prefix on success. Source: $SSHBENCH_HPN_SOURCE, else ../shared/vendor/hpn-ssh-18.8.0.tar.gz from the
# checkout. Prefix: $SSHBENCH_HPN_DIR, else ${XDG_CACHE_HOME:-~/.cache}/sshbench/hpn-ssh-18.8.0
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
cache="${XDG_CACHE_HOME:-$HOME/.cache}/sshbench"
dest="${SSHBENCH_HPN_DIR:-$cache/hpn-ssh-18.8.0}"
source="${SSHBENCH_HPN_SOURCE:-$here/../shared/vendor/hpn-ssh-18.8.0.tar.gz}"
say() { echo "sshbench: HPN-SSH: $*" >&2; }

if [ -x "$dest/bin/hpnssh" ] && [ -x "$dest/sbin/hpnsshd" ] && [ -x "$dest/libexec/hpnsshd-session" ]; then
    echo "$dest"
    exit 0
fi
[ -r "$source" ] || { say "no source at $source: not built; the tests that need it are skipped"; exit 0; }
for tool in autoreconf make cc; do
    command -v "$tool" >/dev/null 2>&1 || {
        say "no $tool (apt-get install autoconf automake build-essential libssl-dev zlib1g-dev): not built; the tests that need it are skipped"
        exit 0
    }
done
[ -r /usr/include/openssl/evp.h ] && [ -r /usr/include/zlib.h ] || {
    say "no OpenSSL or zlib headers (apt-get install libssl-dev zlib1g-dev): not built; the tests that need it are skipped"
    exit 0
}
work="$cache/hpn-build.$$"
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT INT TERM
tar xzf "$source" -C "$work" || { say "cannot unpack $source"; exit 0; }
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n 1)
log="$cache/hpn-build.log"
tmp="$dest.partial.$$"
if ! (cd "$src" && autoreconf -i && ./configure --prefix="$dest" --without-pam --with-privsep-user=sshd \
    --with-privsep-path=/run/sshd && make -j"$(nproc 2>/dev/null || echo 2)" && make install-nokeys DESTDIR="$tmp") \
    >"$log" 2>&1; then
    say "the build failed (last line: $(tail -n 1 "$log")); full log: $log; the tests that need it are skipped"
    rm -rf "$tmp"
    exit 0
fi
# installed under DESTDIR at the prefix's own path: moved into place, where the compiled-in paths point
rm -rf "$dest"
mkdir -p "$(dirname "$dest")"
mv "$tmp$dest" "$dest"
rm -rf "$tmp"
"$dest/bin/hpnssh" -V >/dev/null 2>&1 || { say "the built hpnssh does not run: $("$dest/bin/hpnssh" -V 2>&1 | head -n 1)"; exit 0; }
echo "$dest"
