#!/bin/sh
# Make sure the system tools sshbench drives are present.
# As root on Debian/Ubuntu: install what is missing with apt-get.
# Otherwise: print the one command to run and fail.
set -u
missing=""
have() { command -v "$1" >/dev/null 2>&1; }
sshd_path() { for p in /usr/sbin/sshd /usr/local/sbin/sshd; do [ -x "$p" ] && return 0; done; have sshd; }

have ssh || missing="$missing openssh-client"
sshd_path || missing="$missing openssh-server"
have ssh-keygen || missing="$missing openssh-client"
have openssl || missing="$missing openssl"  # crypto ceiling and --no-aesni check (openssl speed)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing="$missing python3-venv"
for pkg in ${SSHBENCH_EXTRA_PACKAGES:-}; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing="$missing $pkg"
done
missing=$(echo $missing | tr ' ' '\n' | sort -u | tr '\n' ' ')
[ -z "${missing% }" ] && exit 0

if [ "$(id -u)" = 0 ] && have apt-get; then
    echo "sshbench: installing system packages:$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null && apt-get install -y -qq $missing >/dev/null || {
        echo "sshbench: apt-get install$missing failed" >&2; exit 1; }
    exit 0
fi
echo "sshbench: missing system packages; run: sudo apt-get install -y$missing" >&2
exit 1
