"""The HTML report in a real browser: headless Chromium (Debian's `chromium`) opens the file over the
DevTools protocol; the table and every chart must have rendered, with no console error (the page's
Content-Security-Policy turns any network fetch into one). A screenshot is saved as a test artifact."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from sshbench.model import summary
from sshbench.report import html
from sshbench.results import Combination, Negotiated, RunResult, Trial
from sshbench.settings import RunSettings

websocket = pytest.importorskip("websocket", reason="websocket-client is needed to drive Chromium")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    pytest.mark.skipif(
        CHROMIUM is None,
        reason="chromium is not installed (apt-get install chromium; `make test` installs it when run as root)",
    ),
    pytest.mark.e2e,  # a real browser
]
TIMEOUT_S = 30


def _result() -> RunResult:
    """A run with the cipher x MAC matrix, CPU figures, compression and two link bandwidths."""
    trials = []
    rates = {"aes128-gcm@openssh.com": 900.0, "aes128-ctr": 700.0, "chacha20-poly1305@openssh.com": 400.0}
    for link, scale in (("lan100m", 0.01), ("lan1g", 0.1)):  # two emulated link profiles
        for cipher, rate in rates.items():
            macs = ["implicit"] if "@" in cipher else ["hmac-sha2-256", "umac-64-etm@openssh.com"]
            for mac in macs:
                for compression in ("none", "zlib@openssh.com"):
                    combo = Combination(cipher, mac, "curve25519-sha256", compression=compression, link=link)
                    for rep, jitter in enumerate((0.95, 1.0, 1.05)):
                        mib_s = rate * scale * jitter * (2.5 if compression != "none" and link == "lan100m" else 1)
                        trials.append(
                            Trial(
                                combination=combo,
                                kind="transfer",
                                repetition=rep,
                                warmup=False,
                                payload_bytes=8 << 20,
                                started_at=1.7e9 + len(trials),
                                exit_status=0,
                                valid=True,
                                negotiated=Negotiated(cipher, mac, "curve25519-sha256", compression),
                                wall_s=8 / mib_s + 0.3,
                                data_s=8 / mib_s,
                                data_clock="server-reader",
                                client_cpu_s=0.05 * 900 / rate,
                                server_cpu_s=0.04 * 900 / rate,
                            )
                        )
    env = {
        "hostname": "browser-test",
        "cpu_model": "Test CPU",
        "cores": 4,
        "crypto_flags": {"aes": True},
        "client_ssh_version": "OpenSSH_9.2p1",
        "server_ssh_version": "OpenSSH_9.2p1",
        "target": "loopback",
        "payload_kind": "random",
        "payload_size": "8 MiB",
    }
    return RunResult(
        settings=RunSettings(size=8 << 20, runs=3),
        environment=env,
        trials=trials,
        status="complete",
        started_at=1.7e9,
        finished_at=1.7e9 + 60,
        run_id=7,
    )


class DevTools:
    """The few DevTools protocol calls the test needs, over one browser websocket (flattened sessions)."""

    def __init__(self, ws_url: str) -> None:
        self.ws = websocket.create_connection(ws_url, timeout=TIMEOUT_S, suppress_origin=True)
        self.next_id = 0
        self.events: list[dict] = []

    def call(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self.ws.send(json.dumps(message))
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise AssertionError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)
        raise AssertionError(f"no reply to {method} within {TIMEOUT_S} s")

    def wait_event(self, method: str) -> dict:
        deadline = time.monotonic() + TIMEOUT_S
        for event in self.events:
            if event.get("method") == method:
                return event
        while time.monotonic() < deadline:
            event = json.loads(self.ws.recv())
            self.events.append(event)
            if event.get("method") == method:
                return event
        raise AssertionError(f"no {method} within {TIMEOUT_S} s")


def _start_chromium(profile: Path) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--remote-debugging-port=0",
            "--remote-debugging-address=127.0.0.1",
            f"--user-data-dir={profile}",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    from conftest import wait_for_line

    line = wait_for_line(proc.stderr, "DevTools listening on", timeout=TIMEOUT_S)
    return proc, line.split("listening on", 1)[1].strip()


CHECKS = """
(() => {
  const box = (el) => { const r = el.getBoundingClientRect(); return {w: r.width, h: r.height}; };
  const table = document.querySelector('table#results');
  const imgs = [...document.querySelectorAll('figure.chart img')];
  return JSON.stringify({
    rows: table ? table.querySelectorAll('tbody tr').length : 0,
    table: table ? box(table) : null,
    charts: imgs.map(img => ({id: img.closest('figure').id, complete: img.complete,
                              natural: img.naturalWidth, ...box(img)})),
    height: document.documentElement.scrollHeight,
  });
})()
"""


def test_html_report_renders_in_chromium(tmp_path):
    result = _result()
    report = tmp_path / "report.html"
    report.write_text(html.render(result))
    proc, ws_url = _start_chromium(tmp_path / "profile")
    try:
        tools = DevTools(ws_url)
        target = tools.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = tools.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            tools.call(f"{domain}.enable", session=session)
        tools.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        tools.call("Page.navigate", {"url": report.as_uri()}, session=session)
        tools.wait_event("Page.loadEventFired")
        found = json.loads(
            tools.call("Runtime.evaluate", {"expression": CHECKS, "returnByValue": True}, session=session)["result"][
                "value"
            ]
        )
        # Whole page in one screenshot: the viewport as tall as the document.
        tools.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": 1280, "height": int(found["height"]), "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        shot = tools.call("Page.captureScreenshot", {"format": "png"}, session=session)
        screenshot = tmp_path / "report-screenshot.png"
        screenshot.write_bytes(base64.b64decode(shot["data"]))
        print(f"screenshot: {screenshot}")
        try:
            tools.call("Browser.close")
        except Exception:  # the browser may close the socket before replying
            pass
    finally:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)

    assert found["rows"] == len(summary.summaries(result)) == 16
    assert found["table"]["w"] > 400 and found["table"]["h"] > 16 * 15
    ids = sorted(c["id"] for c in found["charts"])
    assert ids == ["chart-cpu", "chart-heatmap", "chart-links", "chart-throughput"]
    for chart in found["charts"]:
        assert chart["complete"] and chart["natural"] > 100, chart  # the SVG decoded
        assert chart["w"] > 300 and chart["h"] > 150, chart  # and is laid out at a readable size
    errors = [
        e
        for e in tools.events
        if (e.get("method") == "Runtime.exceptionThrown")
        or (e.get("method") == "Runtime.consoleAPICalled" and e["params"].get("type") == "error")
        or (e.get("method") == "Log.entryAdded" and e["params"]["entry"].get("level") == "error")
    ]
    assert not errors, errors
    assert screenshot.stat().st_size > 10_000
