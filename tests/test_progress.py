"""The progress sampler (sshbench.measure.progress) on real sockets: a client that reaches its network namespace
only after the sampler started, as `ip netns exec` does behind an emulated link. Root only."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from conftest import wait_for_line
from sshbench.measure.progress import Sampler

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None, reason="needs root and ip(8)"),
]

# In the namespace: a TCP connection to itself on the namespace's loopback, 64 KiB sent (it fits in the
# socket buffers, so nobody has to read), then wait for the test.
IN_NAMESPACE = (
    "import socket, sys\n"
    "listener = socket.socket(); listener.bind(('127.0.0.1', 0)); listener.listen()\n"
    "client = socket.create_connection(listener.getsockname()); peer, _ = listener.accept()\n"
    "client.sendall(b'x' * 65536)\n"
    "print('connected', flush=True); sys.stdin.readline()\n"
)
# Before it: a socket in the test's own namespace (as `ip netns exec` holds its netlink socket), until told
# to exec into the namespace.
BEFORE = (
    "import os, socket, sys\n"
    "held = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
    "print('ready', flush=True); sys.stdin.readline()\n"
    "os.execvp('ip', ['ip', 'netns', 'exec', sys.argv[1], sys.executable, '-c', sys.argv[2]])\n"
)


@pytest.fixture
def namespace():
    name = f"sshbenchtest-progress-{os.getpid()}"  # not an sshbench run's name: its sweeps leave it alone
    subprocess.run(["ip", "netns", "add", name], check=True, capture_output=True)
    try:
        subprocess.run(["ip", "netns", "exec", name, "ip", "link", "set", "lo", "up"], check=True, capture_output=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "delete", name], capture_output=True)
    assert name not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout


def test_a_client_that_enters_its_namespace_after_the_sampler_looked_is_still_sampled(namespace: str):
    child = subprocess.Popen(
        [sys.executable, "-c", BEFORE, namespace, IN_NAMESPACE],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    sampler = None
    try:
        wait_for_line(child.stdout, "ready", timeout=20)
        sampler = Sampler(child.pid, 0.0).start()
        # The sampler's first look finds only the socket in our namespace.
        assert sampler.first_scan.wait(timeout=10)
        child.stdin.write("go\n")
        child.stdin.flush()
        wait_for_line(child.stdout, "connected", timeout=20)
        # Before the fix its kernel requests stayed in our namespace and no sample ever came.
        assert sampler.sampled.wait(timeout=10), sampler.progress.error
        progress = sampler.stop()
        assert progress.error is None
        assert progress.samples[-1].acked + progress.samples[-1].received >= 65536
        # the client's CPU read with every sample, from the process that holds the connection: never decreasing
        cpu = [s.client_cpu_ns for s in progress.samples]
        assert all(c is not None for c in cpu) and cpu == sorted(cpu) and cpu[-1] > 0  # type: ignore[type-var]
    finally:
        if sampler is not None:
            sampler.stop()
        child.kill()
        child.wait(timeout=10)
