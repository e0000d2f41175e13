"""The raw TCP control to a remote host: its remote end started over the ssh connection.

Split from raw_tcp.py (the control itself, the local sink and sender): the remote end is the same
stdlib tcp_sink.py, run by the remote's `python3 -I` through a one-line bootstrap; see raw_tcp.py's
docstring for both directions and docs/architecture.md "Baselines".
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

from sshbench.baselines.raw_tcp import (
    CONNECT_FAILED,
    DATA_CLOCK,
    SINK_SCRIPT,
    STARTUP_TIMEOUT_S,
    TcpSink,
)
from sshbench.results import Trial

# Reads exactly argv[1] bytes of script from stdin (leaving stdin open), then runs it with the sink's argv.
REMOTE_BOOTSTRAP = (
    "import sys; n = int(sys.argv.pop(1)); "
    "exec(compile(sys.stdin.buffer.read(n), 'tcp_sink.py', 'exec'), {'__name__': '__main__'})"
)


def remote_sink_command(script_len: int, timeout_s: float, port: int = 0, mode: str = "") -> str:
    """The remote shell command: the server address of this connection, then the sink on `port` of it
    (0: any free one). `mode` is appended to its argv ("send 'PATH'": the download direction's sender)."""
    return (
        'set -- $SSH_CONNECTION; echo "ADDR $3"; '
        'command -v python3 >/dev/null 2>&1 || { echo "NOPYTHON"; exit 127; }; '
        f'exec python3 -I -c "{REMOTE_BOOTSTRAP}" {script_len} {timeout_s:g} "$3" {int(port)}'
        + (f" {mode}" if mode else "")
    )


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

    def start(self) -> TcpSink:
        script = SINK_SCRIPT.read_bytes()
        mode = "" if self.send_path is None else f"send '{self.send_path}'"
        argv = [*self.ssh_argv, remote_sink_command(len(script), self.timeout_s, self.port, mode)]
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            text=True,
            env=self.env,
        )
        assert self.process.stdin is not None
        try:
            self.process.stdin.buffer.write(script)  # type: ignore[attr-defined]
            self.process.stdin.flush()  # kept open: its end of file stops the remote sink
        except OSError:
            pass
        first = self._line(STARTUP_TIMEOUT_S)
        line = self._line(STARTUP_TIMEOUT_S) if first.startswith("ADDR ") else first
        if not first.startswith("ADDR ") or not line.startswith("PORT "):
            why = "no python3 on the remote" if "NOPYTHON" in line else (line.strip() or self._stderr() or "no output")
            self.close()
            raise SinkStartError(f"raw TCP sink did not start on the remote: {why}")
        self.host = first.split()[1]
        self.address = (self.host, int(line.split()[1]))
        return self

    def wait_sent(self) -> dict:
        """The sender's report ({"sent_bytes", "cpu_s", "error"}) once the receiver is done; bounded."""
        line = self._line(STARTUP_TIMEOUT_S)
        try:
            report = json.loads(line)
            return report if isinstance(report, dict) else {"error": "raw TCP sender gave no report"}
        except ValueError:
            return {"error": f"raw TCP sender gave no report: {line.strip() or self._stderr() or 'no output'}"}


class SinkStartError(OSError):
    """The remote end of the control could not start (could not listen on its port, for one)."""


class TcpReceiver(TcpSink):
    """The download direction's receiving end on this machine: tcp_sink.py in `connect` mode, which
    connects to the remote sender, says "go" and times what arrives (no `PORT` line to wait for)."""

    def start(self) -> TcpSink:
        argv = [sys.executable, "-I", str(SINK_SCRIPT), str(self.timeout_s), self.host, str(self.port), "connect"]
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            text=True,
        )
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
    receiver = TcpReceiver(timeout_s, host=sender.address[0], port=sender.address[1])
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
    trial.invalid_reason = error or sent.get("error")
    if trial.invalid_reason is None and got.received_bytes != trial.payload_bytes:
        trial.invalid_reason = f"receiver got {got.received_bytes} of {trial.payload_bytes} bytes"
    trial.exit_status = 0 if trial.invalid_reason is None else 1
    trial.valid = trial.invalid_reason is None
    return trial
