"""A fake SSH server that sends a real SSH banner and one KEXINIT (with or without the strict-kex marker),
then hangs up: enough for `ssh -vv` to print both proposals. Used to record tests/data/ssh-vv-no-strict-kex.txt
(OpenSSH here always offers strict kex, so a server without it has to be stood in for) and for a live test.
Loopback only; every wait is bounded by a socket timeout.
"""

from __future__ import annotations

import os
import socket
import struct
import threading

SERVER_LISTS = {
    "kex": "curve25519-sha256,diffie-hellman-group14-sha256",
    "hostkey": "ssh-ed25519",
    "ciphers": "chacha20-poly1305@openssh.com,aes128-ctr,aes128-cbc,aes128-gcm@openssh.com",
    "macs": "hmac-sha2-256-etm@openssh.com,hmac-sha2-256",
    "compression": "none",
}


def _name_list(value: str) -> bytes:
    data = value.encode()
    return struct.pack(">I", len(data)) + data


def kexinit_packet(kex: str) -> bytes:
    lists = [
        kex,
        SERVER_LISTS["hostkey"],
        SERVER_LISTS["ciphers"],
        SERVER_LISTS["ciphers"],
        SERVER_LISTS["macs"],
        SERVER_LISTS["macs"],
        SERVER_LISTS["compression"],
        SERVER_LISTS["compression"],
        "",
        "",
    ]
    payload = bytes([20]) + os.urandom(16) + b"".join(_name_list(v) for v in lists) + b"\x00" + b"\x00" * 4
    padding = 8 - (len(payload) + 5) % 8
    padding += 8 if padding < 4 else 0
    return struct.pack(">IB", len(payload) + padding + 1, padding) + payload + b"\x00" * padding


def serve_one_kexinit(strict: bool, timeout_s: float = 10.0) -> tuple[int, threading.Thread]:
    """Listen on 127.0.0.1; for one client, send banner + KEXINIT, read until it hangs up (bounded)."""
    kex = SERVER_LISTS["kex"] + (",kex-strict-s-v00@openssh.com" if strict else "")
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(timeout_s)

    def run() -> None:
        with listener:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(timeout_s)
                try:
                    conn.sendall(b"SSH-2.0-OpenSSH_9.5 sshbench-test-peer\r\n")
                    conn.recv(4096)  # the client's banner (and maybe its KEXINIT)
                    conn.sendall(kexinit_packet(kex))
                    conn.recv(65536)  # its KEXINIT / first kex message; then we hang up
                except OSError:
                    pass

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return listener.getsockname()[1], thread
