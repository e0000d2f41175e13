"""The private AsyncSSH server program: `python -m sshbench.targets.asyncssh_sshd --host-key K --authorized-keys A
--home DIR`. Started (and stopped) by `targets/asyncssh_server.py`; never meant to be run by hand.

It listens on 127.0.0.1 on a port the kernel picks and says `Server listening on 127.0.0.1 port N.`
on stderr once bound (so there is no free-port race), accepts only the throwaway client key, offers every
algorithm the installed AsyncSSH and cryptography can run (legacy ones included), and runs each exec
request's command with /bin/sh like an sshd would, pumping the channel to and from it. The pipe tool's
remote script (dd between two /proc snapshots of its parent) therefore runs unchanged, and its parent,
whose CPU it reports, is this process: the server's cost, crypto included, during the data phase.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys

import asyncssh

from sshbench.algorithms.asyncssh_caps import asyncssh_algorithms

CHUNK = 256 * 1024  # read size of the pumps: large enough that Python's per-call cost stays small
SHELL_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def _shell_env(home: str, username: str) -> dict[str, str]:
    return {
        "HOME": home,
        "USER": username,
        "LOGNAME": username,
        "SHELL": "/bin/sh",
        "PATH": SHELL_PATH,
        **({"OPENSSL_ia32cap": os.environ["OPENSSL_ia32cap"]} if "OPENSSL_ia32cap" in os.environ else {}),
    }


async def _pump_in(channel_in: asyncssh.SSHReader, child_in: asyncio.StreamWriter) -> None:
    """Channel data to the command's stdin until EOF; if the command stops reading, drain and drop."""
    broken = False
    while True:
        data = await channel_in.read(CHUNK)
        if not data:
            break
        if broken:
            continue
        try:
            child_in.write(data)
            await child_in.drain()
        except (BrokenPipeError, ConnectionResetError):
            broken = True
    if not broken:
        try:
            child_in.close()
            await child_in.wait_closed()
        except (BrokenPipeError, ConnectionResetError):
            pass


async def _pump_out(child_out: asyncio.StreamReader, channel_out: asyncssh.SSHWriter) -> None:
    while True:
        data = await child_out.read(CHUNK)
        if not data:
            return
        channel_out.write(data)
        await channel_out.drain()


def make_handler(home: str):
    async def handle(process: asyncssh.SSHServerProcess) -> None:
        command = process.command
        if not command:
            process.stderr.write(b"sshbench's AsyncSSH server runs commands only (no shell, no pty)\n")
            process.exit(1)
            return
        username = process.get_extra_info("username") or "root"
        child = await asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=home,
            env=_shell_env(home, username),
        )
        assert child.stdin is not None and child.stdout is not None and child.stderr is not None
        try:
            await asyncio.gather(
                _pump_in(process.stdin, child.stdin),
                _pump_out(child.stdout, process.stdout),
                _pump_out(child.stderr, process.stderr),
            )
        except Exception:  # the client went away mid-transfer (killed trial): stop the command, reap it
            if child.returncode is None:
                child.kill()
            await child.wait()
            return
        status = await child.wait()
        process.exit(status if status >= 0 else 128 - status)

    return handle


async def serve(args: argparse.Namespace) -> None:
    algs = asyncssh_algorithms()
    listener = await asyncssh.listen(
        "127.0.0.1",
        0,
        server_host_keys=[args.host_key],
        authorized_client_keys=args.authorized_keys,
        process_factory=make_handler(args.home),
        encoding=None,
        sftp_factory=True,
        allow_scp=True,  # so OpenSSH's scp and sftp also have a server side
        encryption_algs=algs.ciphers,
        mac_algs=algs.macs,
        kex_algs=algs.kex,
        compression_algs=algs.compression,
        password_auth=False,
        kbdint_auth=False,
        gss_host=None,
        agent_forwarding=False,
        x11_forwarding=False,
        allow_pty=False,
        line_editor=False,
        login_timeout=30,
        keepalive_interval=0,
    )
    print(f"Server listening on 127.0.0.1 port {listener.get_port()}.", file=sys.stderr, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()
    listener.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sshbench-asyncssh-sshd")
    parser.add_argument("--host-key", required=True)
    parser.add_argument("--authorized-keys", required=True)
    parser.add_argument("--home", required=True, help="working directory and HOME of the commands run")
    args = parser.parse_args(argv)
    try:
        asyncio.run(serve(args))
    except (OSError, asyncssh.Error, ValueError) as err:
        print(f"sshbench asyncssh server: {err}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
