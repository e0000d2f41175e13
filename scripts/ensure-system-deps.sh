#!/bin/sh
# Make sure the system tools sshbench drives are present.
# As root on Debian/Ubuntu: install what is missing with apt-get (one apt-get run).
# Otherwise: required tools missing -> print the one command to run and fail;
#            optional ones missing  -> print one hint line and go on (their features/tests say so).
# SSHBENCH_EXTRA_PACKAGES: more optional packages (the test suite's: rsync, chromium, ...).
set -u
required=""
optional=""
have() { command -v "$1" >/dev/null 2>&1; }
have_any() { for p in "$@"; do [ -x "$p" ] && return 0; done; return 1; }

have ssh || required="$required openssh-client"
have ssh-keygen || required="$required openssh-client"
have_any /usr/sbin/sshd /usr/local/sbin/sshd || have sshd || required="$required openssh-server"
have openssl || required="$required openssl"  # crypto ceiling and --no-aesni check (openssl speed)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || required="$required python3-venv"

# Optional features: --server dropbear, --link (iproute2: ip, tc; needs root anyway), --tool rsync.
have dropbear || have_any /usr/sbin/dropbear || optional="$optional dropbear-bin"
have tc || have_any /usr/sbin/tc /sbin/tc || optional="$optional iproute2"
have rsync || optional="$optional rsync"
for pkg in ${SSHBENCH_EXTRA_PACKAGES:-}; do
    dpkg -s "$pkg" >/dev/null 2>&1 || optional="$optional $pkg"
done

dedupe() { echo "$@" | tr ' ' '\n' | sed '/^$/d' | sort -u | tr '\n' ' ' | sed 's/ $//'; }
required=$(dedupe $required)
optional=$(dedupe $optional)
[ -z "$required$optional" ] && exit 0

if [ "$(id -u)" = 0 ] && have apt-get; then
    all=$(dedupe $required $optional)
    echo "sshbench: installing system packages: $all" >&2
    export DEBIAN_FRONTEND=noninteractive
    if apt-get update -qq >/dev/null && apt-get install -y -qq $all >/dev/null; then
        exit 0
    fi
    [ -z "$required" ] || { echo "sshbench: apt-get install $all failed" >&2; exit 1; }
    echo "sshbench: optional packages could not be installed ($optional); the features and tests that need them are skipped" >&2
    exit 0
fi
if [ -n "$optional" ]; then
    echo "sshbench: optional packages missing ($optional): what needs them is skipped; to have it: sudo apt-get install -y $optional" >&2
fi
if [ -n "$required" ]; then
    echo "sshbench: missing system packages; run: sudo apt-get install -y $required" >&2
    exit 1
fi
exit 0
