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
# Optional: Dropbear for `--server dropbear`. Installed with the rest as root; otherwise one hint, never a failure.
if ! have dropbear && [ ! -x /usr/sbin/dropbear ]; then
    if [ "$(id -u)" = 0 ] && have apt-get; then
        case " $missing " in *" dropbear-bin "*) ;; *) missing="$missing dropbear-bin" ;; esac
    else
        echo "sshbench: optional: --server dropbear needs Dropbear; run: sudo apt-get install -y dropbear-bin" >&2
    fi
fi
# Optional: iproute2 (ip, tc) for `--link` (emulated LAN/WAN links; they need root anyway).
# Installed with the rest as root; otherwise one hint, never a failure.
if ! have tc && [ ! -x /usr/sbin/tc ] && [ ! -x /sbin/tc ]; then
    if [ "$(id -u)" = 0 ] && have apt-get; then
        case " $missing " in *" iproute2 "*) ;; *) missing="$missing iproute2" ;; esac
    else
        echo "sshbench: optional: --link (emulated links, as root) needs iproute2; run: sudo apt-get install -y iproute2" >&2
    fi
fi
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
