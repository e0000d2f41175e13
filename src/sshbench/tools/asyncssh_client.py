"""An ssh-like client built on AsyncSSH, for the ciphers OpenSSH's client no longer speaks.

    python -m sshbench.tools.asyncssh_client -F /dev/null -i KEY -o Port=N -o User=U -o Ciphers=C [-o MACs=M]
        -o KexAlgorithms=K -o Compression=no -v HOST COMMAND

It takes the options sshbench passes to ssh (-F/-i/-o; unknown -o options are ignored, as they select
nothing AsyncSSH has) and prints the lines of `ssh -v` that sshbench reads (sshlog.parse_ssh_log):

    debug1: Remote protocol version 2.0, remote software version AsyncSSH_2.24.1
    debug1: kex: algorithm: curve25519-sha256
    debug1: kex: client->server cipher: arcfour MAC: hmac-sha2-256 compression: none
    Transferred: sent N, received M bytes, in T seconds
    debug1: Exit status 0

Everything printed is read back from the connection, never echoed from the request: the ciphers, MACs and
compression from AsyncSSH's negotiated state, the kex from its own debug log, the byte counts from the
kernel's TCP_INFO (bytes acknowledged by and received from the server: SSH packets, all of them).
It runs as a subprocess of the trial, so `os.wait4` measures its CPU like ssh's.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import struct
import sys
import time
from dataclasses import dataclass, field

CHUNK = 256 * 1024
# struct tcp_info (linux/tcp.h): tcpi_bytes_acked at 120, tcpi_bytes_received at 128 (Linux 4.1+).
_TCP_INFO_LEN = 136
_BYTES_ACKED_AT, _BYTES_RECEIVED_AT = 120, 128
AEAD_PREFIXES = ("chacha20-poly1305", "aes128-gcm", "aes256-gcm")


@dataclass
class ClientOptions:
    host: str = ""
    command: str = ""
    port: int = 22
    user: str | None = None
    identity: list[str] = field(default_factory=list)
    ciphers: list[str] | None = None
    macs: list[str] | None = None
    kex: list[str] | None = None
    compression: bool = False
    known_hosts: str | None = None
    host_key_algs: list[str] | None = None
    connect_timeout: float = 10.0
    verbose: int = 0


class UsageProblem(Exception):
    pass


def parse_args(argv: list[str]) -> ClientOptions:
    opts = ClientOptions()
    positional: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if positional:  # everything after the host is the command, as with ssh
            positional.append(arg)
        elif arg in ("-F", "-i", "-o", "-p", "-l", "-c", "-m"):
            if i + 1 >= len(argv):
                raise UsageProblem(f"option {arg} needs a value")
            value = argv[i + 1]
            i += 1
            if arg == "-i":
                opts.identity.append(value)
            elif arg == "-o":
                _set_option(opts, value)
            elif arg == "-p":
                opts.port = int(value)
            elif arg == "-l":
                opts.user = value
            elif arg == "-c":
                opts.ciphers = value.split(",")
            elif arg == "-m":
                opts.macs = value.split(",")
            # -F: AsyncSSH is never given a config file (config=[] below), whatever it names
        elif arg.startswith("-v") and set(arg[1:]) == {"v"}:
            opts.verbose += len(arg) - 1
        elif arg.startswith("-"):
            raise UsageProblem(f"unknown option {arg}")
        else:
            positional.append(arg)
        i += 1
    if not positional:
        raise UsageProblem("no host given")
    opts.host = positional[0]
    if "@" in opts.host:
        opts.user, opts.host = opts.host.rsplit("@", 1)
    opts.command = " ".join(positional[1:])
    return opts


def _set_option(opts: ClientOptions, text: str) -> None:
    key, sep, value = text.partition("=")
    if not sep:
        key, _, value = text.partition(" ")
    key, value = key.strip().lower(), value.strip()
    if key == "port":
        opts.port = int(value)
    elif key == "user":
        opts.user = value
    elif key == "ciphers":
        opts.ciphers = value.split(",")
    elif key == "macs":
        opts.macs = value.split(",")
    elif key == "kexalgorithms":
        opts.kex = value.split(",")
    elif key == "compression":
        opts.compression = value.lower() == "yes"
    elif key == "userknownhostsfile":
        opts.known_hosts = value
    elif key == "hostkeyalgorithms":
        opts.host_key_algs = value.split(",")
    elif key == "connecttimeout":
        opts.connect_timeout = float(value)
    elif key == "identityfile":
        opts.identity.append(value)


class _KexCapture(logging.Handler):
    """AsyncSSH logs the key exchange it chose (debug level 2) before it runs it."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.kex: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()  # "[conn=0] Key exchange alg: curve25519-sha256"
        except Exception:
            return
        marker = "Key exchange alg: "
        if marker in text:
            value = text.split(marker, 1)[1].split()
            if value:
                name = value[0]
                if name.startswith(("b'", 'b"')) and len(name) > 3:  # a bytes repr, in case it is one
                    name = name[2:-1]
                self.kex = name


def tcp_bytes(sock: socket.socket | None) -> tuple[int | None, int | None]:
    """(bytes the server acknowledged, bytes received from it) on this TCP connection, or Nones."""
    if sock is None:
        return None, None
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
    except OSError:
        return None, None
    if len(info) < _TCP_INFO_LEN:
        return None, None
    (acked,) = struct.unpack_from("=Q", info, _BYTES_ACKED_AT)
    (received,) = struct.unpack_from("=Q", info, _BYTES_RECEIVED_AT)
    return acked, received


def _err(line: str) -> None:
    os.write(2, (line + "\n").encode())


async def _send_stdin(writer) -> None:
    while True:
        data = os.read(0, CHUNK)  # a payload file on tmpfs: reading it does not block for long
        if not data:
            break
        writer.write(data)
        await writer.drain()
    writer.write_eof()


async def _copy_out(reader, fd: int) -> None:
    while True:
        data = await reader.read(CHUNK)
        if not data:
            return
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]


async def run(opts: ClientOptions) -> int:
    import asyncssh  # optional: main() turns its ImportError into one line

    capture = _KexCapture()
    asyncssh_logger = logging.getLogger("asyncssh")
    asyncssh_logger.addHandler(capture)
    asyncssh_logger.setLevel(logging.DEBUG)
    asyncssh.set_debug_level(2)
    compression = ["zlib@openssh.com", "zlib"] if opts.compression else ["none"]
    kwargs: dict = dict(
        port=opts.port,
        username=opts.user,
        client_keys=opts.identity or None,
        known_hosts=opts.known_hosts,
        config=[],
        agent_path=None,
        password=None,
        kbdint_auth=False,
        gss_auth=False,
        preferred_auth="publickey",
        compression_algs=compression,
        connect_timeout=opts.connect_timeout,
    )
    if opts.ciphers:
        kwargs["encryption_algs"] = opts.ciphers
    if opts.macs:
        kwargs["mac_algs"] = opts.macs
    if opts.kex:
        kwargs["kex_algs"] = opts.kex
    if opts.host_key_algs:
        kwargs["server_host_key_algs"] = opts.host_key_algs
    try:
        conn = await asyncssh.connect(opts.host, **kwargs)
    except (OSError, asyncssh.Error, ValueError) as err:
        _err(f"asyncssh: connect to host {opts.host} port {opts.port}: {err}")
        return 255
    finally:
        # The handshake is over: no logging cost in the data phase.
        asyncssh_logger.removeHandler(capture)
        asyncssh_logger.setLevel(logging.WARNING)
        asyncssh.set_debug_level(1)
    async with conn:
        version = conn.get_extra_info("server_version") or ""
        local = conn.get_extra_info("client_version") or ""
        if opts.verbose:
            _err(f"debug1: Local version string {local}")
            _err(f"debug1: Remote protocol version 2.0, remote software version {version.split('-', 2)[-1]}")
            _err(f"debug1: kex: algorithm: {capture.kex or '(unknown)'}")
            for direction, prefix in (("client->server", "send"), ("server->client", "recv")):
                cipher = conn.get_extra_info(f"{prefix}_cipher")
                mac = conn.get_extra_info(f"{prefix}_mac")
                if cipher and cipher.startswith(AEAD_PREFIXES):
                    mac = "<implicit>"  # as OpenSSH prints it: the AEAD cipher carries its own tag
                _err(
                    f"debug1: kex: {direction} cipher: {cipher} MAC: {mac} "
                    f"compression: {conn.get_extra_info(f'{prefix}_compression')}"
                )
        sock = conn.get_extra_info("socket")
        start = time.monotonic()
        try:
            process = await conn.create_process(opts.command or None, encoding=None)
            await asyncio.gather(_send_stdin(process.stdin), _copy_out(process.stdout, 1), _copy_out(process.stderr, 2))
            completed = await process.wait(check=False)
        except (OSError, asyncssh.Error) as err:
            _err(f"asyncssh: session failed: {err}")
            return 255
        elapsed = time.monotonic() - start
        sent, received = tcp_bytes(sock)
        if opts.verbose and sent is not None and received is not None:
            _err(f"Transferred: sent {sent}, received {received} bytes, in {elapsed:.1f} seconds")
            if elapsed > 0:
                _err(f"Bytes per second: sent {sent / elapsed:.1f}, received {received / elapsed:.1f}")
        status = completed.exit_status
        if status is None or status < 0:
            status = 255
        if opts.verbose:
            _err(f"debug1: Exit status {status}")
        return status
    return 255  # not reached: the connection's context manager does not swallow errors


def main(argv: list[str] | None = None) -> int:
    try:
        opts = parse_args(sys.argv[1:] if argv is None else argv)
    except (UsageProblem, ValueError) as err:
        _err(f"usage: asyncssh_client [-F FILE] [-i KEY] [-o Option=value] [-v] HOST [COMMAND]: {err}")
        return 255
    try:
        return asyncio.run(run(opts))
    except ImportError as err:
        from sshbench.algorithms.asyncssh_caps import ASYNCSSH_INSTALL_HINT  # error path only: the client starts light

        _err(f"asyncssh: not installed ({err}); {ASYNCSSH_INSTALL_HINT}")
        return 255
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
