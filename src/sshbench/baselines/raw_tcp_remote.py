"""The raw TCP control to a remote host: its remote end started over the ssh connection.

Split from raw_tcp.py (the control itself and the sender; the sink process is sink_process.TcpSink, which
RemoteTcpSink starts over ssh): the remote end is the same stdlib tcp_sink.py, run by the remote's
`python3 -I` through a one-line bootstrap (without python3 there: `nc` and `dd`, nc_fallback); see
raw_tcp.py's docstring for both directions and docs/architecture.md "Baselines".
"""

from __future__ import annotations

import json
import random
import re
import secrets
import sys
import time

from sshbench.baselines.sink_process import (
    CONNECT_FAILED,
    DATA_CLOCK,
    SINK_SCRIPT,
    STARTUP_TIMEOUT_S,
    SinkResult,
    TcpSink,
)
from sshbench.results import Trial

# Reads exactly argv[1] bytes of script from stdin, then the run's token line (leaving stdin open: its end stops the
# sink), then runs the script with the sink's argv and the token as SINK_TOKEN (tcp_sink.accept_ours checks it).
REMOTE_BOOTSTRAP = (
    "import sys; n = int(sys.argv.pop(1)); s = sys.stdin.buffer.read(n); "
    "t = sys.stdin.buffer.readline().strip().decode(); "
    "exec(compile(s, 'tcp_sink.py', 'exec'), {'__name__': '__main__', 'SINK_TOKEN': t})"
)
# What a remote without python3 cannot check: its nc takes the first connection from anyone.
NC_UNCHECKED = (
    "the remote has no python3: its nc end of the raw TCP control takes the first connection from anyone "
    "(no check of the address or the run's token)"
)


# Dynamic ports (RFC 6335): where an nc sink listens unless --raw-tcp-port says otherwise (nc prints no port).
NC_PORTS = (49152, 65535)
NC_TOOLS = ("nc", "dd")


def remote_sink_command(
    script_len: int, timeout_s: float, port: int = 0, send_path: str | None = None, nc_port: int | None = None
) -> str:
    """The remote shell command: the server address of this connection, then the sink on `port` of it
    (0: any free one); `send_path`: the download direction's sender of that (remote) file instead.
    Without python3 there, `nc` (with `dd` counting) on `nc_port` (default `port`); without those
    either, NOPYTHON."""
    mode = f" send '{send_path}'" if send_path is not None else ""
    python = f'exec python3 -I -c "{REMOTE_BOOTSTRAP}" {script_len} {timeout_s:g} "$3" {int(port)}{mode}'
    return (
        'set -- $SSH_CONNECTION; echo "ADDR $3"; '
        f"if command -v python3 >/dev/null 2>&1; then {python}; fi; " + nc_fallback(nc_port or port, send_path)
    )


def nc_fallback(port: int, send_path: str | None) -> str:
    """The sink (or the download's sender) with `nc`, for a remote without python3 (a router, a NAS, a
    Bifferboard: BusyBox has both). nc says nothing once it listens and sends no "go", so the local
    end retries a refused connect while it starts and times the transfer itself; `dd` counts the
    bytes and prints them. Listening differs by nc: BusyBox, traditional and Debian's take
    `-l -s ADDR -p PORT`, OpenBSD's own `-l ADDR PORT`; each is tried in turn (a wrong syntax fails at
    once). It stops as the python3 sink does when the ssh connection closes (our end, or sshbench
    killed): a watcher waits for the end of its stdin and kills the command's process group (the
    shell that sshd made a session leader, nc and dd); `timeout` would put nc in a group of its own."""
    listen = [f'-l -s "$3" -p {port}', f'-l "$3" {port}', f"-l -p {port}"]
    check = " && ".join(f"command -v {t} >/dev/null 2>&1" for t in NC_TOOLS)
    head = (
        f'{check} || {{ echo "NOPYTHON"; exit 127; }}; '
        # (a background list's stdin is /dev/null unless given: hence fd 4)
        "exec 4<&0; ( cat <&4 >/dev/null 2>&1; kill 0 ) >/dev/null 2>&1 & exec 4<&-; "
        f'echo "PORT {port} nc"; '
    )
    if send_path is None:  # receive and count
        tries = " || ".join(f"nc {args} </dev/null 2>/dev/null" for args in listen)
        return head + f"{{ {tries}; }} | LC_ALL=C dd of=/dev/null bs=1048576 2>&1"
    # send the file: dd's report to our stdout (fd 3), the receiver's "go" byte to /dev/null
    tries = " || ".join(f"nc {args} >/dev/null 2>&1" for args in listen)
    return head + f"{{ LC_ALL=C dd if='{send_path}' bs=1048576 2>&3 | {{ {tries}; }}; }} 3>&1"


_DD_COUNT = re.compile(r"^(\d+) bytes", re.M)


def dd_bytes(text: str) -> int | None:
    """The byte count of dd's summary (GNU, BSD and BusyBox all start it with the number of bytes)."""
    found = _DD_COUNT.findall(text)
    return int(found[-1]) if found else None


class RemoteTcpSink(TcpSink):
    """tcp_sink.py on a remote host, run through `ssh_argv` (ssh, its options and the destination);
    `send_path` set: the download direction's sender of that (remote) file instead of a sink."""

    def __init__(
        self,
        timeout_s: float,
        ssh_argv: list[str],
        env: dict[str, str] | None = None,
        port: int = 0,
        send_path: str | None = None,
    ) -> None:
        super().__init__(timeout_s, port=port)
        self.ssh_argv, self.env, self.send_path = ssh_argv, env, send_path
        self.token: str | None = None
        self.via = "python3"  # or "nc": the remote had no python3 (its PORT line says which)

    def start(self) -> TcpSink:
        script = SINK_SCRIPT.read_bytes()
        self.token = secrets.token_hex(16)  # this sink's: the client sends it before the sink's "go"
        nc_port = self.port or random.randint(*NC_PORTS)
        command = remote_sink_command(len(script), self.timeout_s, self.port, self.send_path, nc_port)
        self.process = self._spawn([*self.ssh_argv, command], env=self.env)
        assert self.process.stdin is not None
        try:
            self.process.stdin.buffer.write(script + f"{self.token}\n".encode())  # type: ignore[attr-defined]
            self.process.stdin.flush()  # kept open: its end of file stops the remote sink
        except OSError:
            pass
        first = self._line(STARTUP_TIMEOUT_S)
        line = self._line(STARTUP_TIMEOUT_S) if first.startswith("ADDR ") else first
        if not first.startswith("ADDR ") or not line.startswith("PORT "):
            why = (
                f"no python3 on the remote, nor {', '.join(NC_TOOLS)} for its fallback"
                if "NOPYTHON" in line
                else (line.strip() or self._stderr() or "no output")
            )
            self.close()
            raise SinkStartError(f"raw TCP sink did not start on the remote: {why}")
        self.host = first.split()[1]
        self.address = (self.host, int(line.split()[1]))
        self.via = "nc" if line.split()[2:] == ["nc"] else "python3"
        return self

    def wait(self) -> SinkResult:
        if self.via != "nc":
            return super().wait()
        # nc's sink: dd's summary once nc has seen the sender's end of data; the sender timed it
        line = self._line(self.timeout_s)
        report = line + self._rest()
        received = dd_bytes(report)
        if received is None:
            self.result.error = f"raw TCP sink (nc) gave no count: {report.strip() or self._stderr() or 'no output'}"
        else:
            self.result = SinkResult(received_bytes=received)
        return self.result

    def _rest(self) -> str:
        """The rest of the remote's output, up to its end (bounded)."""
        lines, deadline = [], time.monotonic() + STARTUP_TIMEOUT_S
        while (left := deadline - time.monotonic()) > 0 and (line := self._line(left)):
            lines.append(line)
        return "".join(lines)

    def wait_sent(self) -> dict:
        """The sender's report ({"sent_bytes", "cpu_s", "error"}) once the receiver is done; bounded."""
        if self.via == "nc":  # dd's count of what it fed nc; no CPU figure
            report = self._rest()
            sent = dd_bytes(report)
            if sent is None:
                return {"error": f"raw TCP sender (nc) gave no count: {report.strip() or 'no output'}"}
            return {"sent_bytes": sent, "cpu_s": None, "error": None}
        line = self._line(STARTUP_TIMEOUT_S)
        try:
            report = json.loads(line)
            return report if isinstance(report, dict) else {"error": "raw TCP sender gave no report"}
        except ValueError:
            return {"error": f"raw TCP sender gave no report: {line.strip() or self._stderr() or 'no output'}"}


def sink_notes(via: str, refused: list[str] | None) -> list[str]:
    """The run's notes on a remote control's end: connections it refused, and what an nc end cannot check."""
    notes = [NC_UNCHECKED] if via == "nc" else []
    if refused:
        notes.append(f"the raw TCP control's remote end refused {len(refused)} connection(s): {'; '.join(refused[:3])}")
    return notes


class SinkStartError(OSError):
    """The remote end of the control could not start (could not listen on its port, for one)."""


class TcpReceiver(TcpSink):
    """The download direction's receiving end on this machine: tcp_sink.py in `connect` mode, which
    connects to the remote sender, says "go" and times what arrives (no `PORT` line to wait for), up
    to `expected` bytes (a remote nc keeps its end open after its input ended)."""

    def __init__(self, timeout_s: float, host: str, port: int, expected: int, token: str | None = None) -> None:
        super().__init__(timeout_s, host=host, port=port)
        self.expected, self.token = expected, token

    def start(self) -> TcpSink:
        argv = [
            sys.executable, "-I", str(SINK_SCRIPT), str(self.timeout_s), self.host, str(self.port), "connect",
            str(self.expected), *(["token"] if self.token else []),
        ]  # fmt: skip
        process = self._spawn(argv)
        if self.token and process.stdin is not None:  # on stdin: never in this machine's ps
            try:
                process.stdin.write(self.token + "\n")
                process.stdin.flush()
            except OSError:
                pass
        return self


def blocked_note(trial: Trial, path: dict | None) -> str | None:
    """One line for a remote control that cannot work this run (the port unreachable or not listenable,
    no python3), naming host and port and how to allow it; None for a one-off failure or a local control."""
    if path is None or "remote_ssh" not in path or trial.valid or not trial.invalid_reason:
        return None
    reason = trial.invalid_reason
    host = path.get("host", "the remote")
    if reason.startswith(CONNECT_FAILED):
        where = reason[len(CONNECT_FAILED) :].split(":", 2)
        address, port = (where[0].strip(), where[1].strip()) if len(where) > 1 else (host, "?")
        return (
            f"raw TCP control left out: {host} ({address}) port {port} cannot be reached from here "
            f"({where[-1].strip()}); a firewall? allow TCP port {port} there, or pick a port it lets through "
            "with --raw-tcp-port N; the run went on without it"
        )
    if reason.startswith("raw TCP sink did not start on the remote"):
        port = path.get("port") or "any free port"
        return (
            f"raw TCP control left out: {reason[len('raw TCP sink did not start on the remote: ') :]} "
            f"({host}, port {port}); pick another with --raw-tcp-port N; the run went on without it"
        )
    return None


def remote_download(trial: Trial, path: dict, timeout_s: float) -> Trial:
    """The server sends its copy of the payload (tcp_sink.py `send` on the remote), a local receiver
    connects to it and times what arrives: the same receiver clock as the upload direction."""
    sender = RemoteTcpSink(
        timeout_s, path["remote_ssh"], env=path.get("env"), port=path.get("port", 0), send_path=path["source"]
    )
    try:
        sender.start()
    except OSError as err:
        trial.exit_status, trial.invalid_reason = 1, str(err)
        return trial
    token = sender.token if sender.via != "nc" else None
    receiver = TcpReceiver(
        timeout_s, host=sender.address[0], port=sender.address[1], expected=trial.payload_bytes, token=token
    )
    start = time.perf_counter()
    try:
        receiver.start()
        got = receiver.wait()
        sent = sender.wait_sent()
    finally:
        try:
            receiver.close()
        finally:
            sender.close()
    trial.wall_s = time.perf_counter() - start
    trial.received_bytes_at_sink, trial.sent_bytes = got.received_bytes, sent.get("sent_bytes")
    trial.client_cpu_s = trial.server_sink_cpu_s = got.cpu_s  # the receiver here is the sink
    trial.server_cpu_s = sent.get("cpu_s")
    if got.data_s and got.data_s > 0:
        trial.data_s, trial.data_clock = got.data_s, DATA_CLOCK
    error = got.error
    if error and error.startswith("connect: "):
        error = f"{CONNECT_FAILED}{sender.address[0]}:{sender.address[1]}: {error[len('connect: ') :]}"
    path.setdefault("notes", []).extend(sink_notes(sender.via, sent.get("refused")))
    trial.invalid_reason = error or sent.get("error")
    if trial.invalid_reason is None and got.received_bytes != trial.payload_bytes:
        trial.invalid_reason = f"receiver got {got.received_bytes} of {trial.payload_bytes} bytes"
    trial.exit_status = 0 if trial.invalid_reason is None else 1
    trial.valid = trial.invalid_reason is None
    return trial
