#!/bin/sh
# Fetch OpenSSH 10.0 (bookworm-backports) into a private directory, for the build-sweep tests and for
# `sshbench run --ssh /usr/bin/ssh,DIR/usr/bin/ssh --sshd /usr/sbin/sshd,DIR/usr/sbin/sshd`.
#
# Nothing system-wide changes: apt runs with a private configuration (its own sources list, state and cache
# under the cache dir), `apt-get download` fetches the .debs, `dpkg -x` extracts them. Cached: a second run
# does nothing. Unreachable archive (or no apt/dpkg): one line, exit 0, and the tests that need it skip.
#
# Prints the extracted tree's path on success. Dir: $SSHBENCH_OPENSSH10_DIR, else
# ${XDG_CACHE_HOME:-~/.cache}/sshbench/openssh-10.0
set -u
cache="${XDG_CACHE_HOME:-$HOME/.cache}/sshbench"
dest="${SSHBENCH_OPENSSH10_DIR:-$cache/openssh-10.0}"
say() { echo "sshbench: OpenSSH 10.0: $*" >&2; }

if [ -x "$dest/usr/bin/ssh" ] && [ -x "$dest/usr/sbin/sshd" ] && [ -x "$dest/usr/lib/openssh/sshd-session" ]; then
    echo "$dest"
    exit 0
fi
command -v apt-get >/dev/null 2>&1 && command -v dpkg >/dev/null 2>&1 || {
    say "no apt-get/dpkg here: not fetched; the tests that need it are skipped"
    exit 0
}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] || { say "no $keyring: not fetched; the tests that need it are skipped"; exit 0; }

work="$cache/apt-openssh10"
mkdir -p "$work/etc/apt.conf.d" "$work/etc/preferences.d" "$work/etc/sources.list.d" \
    "$work/state/lists/partial" "$work/cache/archives/partial" "$work/debs"
echo "deb [signed-by=$keyring] http://deb.debian.org/debian bookworm-backports main" >"$work/etc/sources.list"
: >"$work/state/status"
opts="-o Dir::Etc::sourcelist=$work/etc/sources.list -o Dir::Etc::sourceparts=$work/etc/sources.list.d
 -o Dir::Etc::parts=$work/etc/apt.conf.d -o Dir::Etc::preferencesparts=$work/etc/preferences.d
 -o Dir::State=$work/state -o Dir::State::status=$work/state/status -o Dir::Cache=$work/cache
 -o Acquire::Retries=1 -o Acquire::http::Timeout=20 -o APT::Architecture=$(dpkg --print-architecture)"
# shellcheck disable=SC2086
# apt-get update exits 0 when a source cannot be fetched (a warning): look for the failure too
if ! apt-get $opts -qq update >"$work/update.log" 2>&1 || grep -q "Failed to fetch\|^Err:\|^E:" "$work/update.log"; then
    say "the archive (deb.debian.org bookworm-backports) is unreachable: not fetched; the tests that need it are skipped"
    exit 0
fi
version=$(apt-cache $opts policy openssh-client 2>/dev/null | awk '/Candidate:/ {print $2}')
case "$version" in
    1:10.*) ;;
    *) say "bookworm-backports offers openssh-client '${version:-none}', not 10.x: not fetched"; exit 0 ;;
esac
# shellcheck disable=SC2086
if ! (cd "$work/debs" && apt-get $opts -qq download "openssh-client=$version" "openssh-server=$version" \
    "openssh-sftp-server=$version" >"$work/download.log" 2>&1); then
    say "download failed ($(tail -n 1 "$work/download.log")): not fetched; the tests that need it are skipped"
    exit 0
fi
tmp="$dest.partial.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
for deb in "$work"/debs/*.deb; do
    dpkg -x "$deb" "$tmp" || { say "dpkg -x $deb failed"; rm -rf "$tmp"; exit 0; }
done
if ! "$tmp/usr/bin/ssh" -V >/dev/null 2>&1; then
    say "the extracted ssh does not run here ($("$tmp/usr/bin/ssh" -V 2>&1 | head -n 1)): not used"
    rm -rf "$tmp"
    exit 0
fi
rm -rf "$dest"
mv "$tmp" "$dest"
rm -rf "$work/debs"
echo "$dest"
