"""A tiny DevTools-protocol client for headless Chromium over ``--remote-debugging-pipe``.

The pipe transport (file descriptors 3 and 4, NUL-terminated JSON messages) needs no
websocket library. Used by the browser test to load a report, collect console errors and
uncaught exceptions, run DOM checks and take a screenshot.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import queue
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--mute-audio",
)
TIMEOUT_S = 60.0


def find_chromium() -> str | None:
    """The path of an installed Chromium/Chrome, or None."""
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


class BrowserError(RuntimeError):
    """The browser did not answer, or answered a command with an error."""


class Browser:
    """One headless browser with one page, driven through the DevTools pipe."""

    def __init__(
        self, executable: str, profile_dir: Path, width: int = 1400, height: int = 1000
    ) -> None:
        self.width, self.height = width, height
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # Chromium reads commands on fd 3 and writes replies on fd 4.
        os.set_inheritable(to_browser_r, True)
        os.set_inheritable(from_browser_w, True)

        def wire_fds() -> None:
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        self.process = subprocess.Popen(
            [
                executable,
                *FLAGS,
                f"--user-data-dir={profile_dir}",
                f"--window-size={width},{height}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=wire_fds,
            close_fds=False,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._next_id = 0
        self._replies: dict[int, queue.Queue[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.session = self._attach_page()

    def _read(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = os.read(self._from_browser, 65536)
            except OSError:
                return
            if not chunk:
                return
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                message = json.loads(raw)
                if "id" in message:
                    with self._lock:
                        waiting = self._replies.get(message["id"])
                    if waiting is not None:
                        waiting.put(message)
                else:
                    self.events.put(message)

    def send(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """Send a command and wait for its result."""
        with self._lock:
            self._next_id += 1
            number = self._next_id
            reply: queue.Queue[dict[str, Any]] = queue.Queue()
            self._replies[number] = reply
        message: dict[str, Any] = {"id": number, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        try:
            answer = reply.get(timeout=TIMEOUT_S)
        except queue.Empty:
            raise BrowserError(f"no reply to {method} within {TIMEOUT_S} s") from None
        if "error" in answer:
            raise BrowserError(f"{method}: {answer['error']}")
        return answer.get("result", {})

    def page(self, method: str, **params: Any) -> dict[str, Any]:
        """A command to the page's session."""
        return self.send(method, self.session, **params)

    def _attach_page(self) -> str:
        targets = self.send("Target.getTargets")["targetInfos"]
        page = next((t for t in targets if t["type"] == "page"), None)
        target_id = (
            page["targetId"]
            if page
            else self.send("Target.createTarget", url="about:blank")["targetId"]
        )
        session = self.send("Target.attachToTarget", targetId=target_id, flatten=True)
        return session["sessionId"]

    def wait_event(self, method: str) -> dict[str, Any]:
        """Wait for the next event ``method`` of the page (others are kept in ``seen``)."""
        while True:
            try:
                event = self.events.get(timeout=TIMEOUT_S)
            except queue.Empty:
                raise BrowserError(f"no {method} event within {TIMEOUT_S} s") from None
            self.seen.append(event)
            if event.get("method") == method:
                return event

    seen: list[dict[str, Any]]

    def open(self, url: str) -> None:
        """Enable console/exception reporting, load ``url`` and wait for its load event."""
        self.seen = []
        for domain in ("Page", "Runtime", "Log"):
            self.page(f"{domain}.enable")
        self.page(
            "Emulation.setDeviceMetricsOverride",
            width=self.width,
            height=self.height,
            deviceScaleFactor=1,
            mobile=False,
        )
        self.page("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The JSON value of a JavaScript expression in the page."""
        result = self.page("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout_s: float = TIMEOUT_S) -> None:
        """Wait until a JavaScript expression is true (a page's event handlers run later)."""
        deadline = time.monotonic() + timeout_s
        while not self.evaluate(expression):
            if time.monotonic() > deadline:
                raise BrowserError(f"{expression} still false after {timeout_s} s")
            time.sleep(0.05)

    def drain_events(self) -> list[dict[str, Any]]:
        while True:
            try:
                self.seen.append(self.events.get_nowait())
            except queue.Empty:
                return self.seen

    def console_errors(self) -> list[str]:
        """Uncaught exceptions, console.error calls and error log entries so far."""
        errors = []
        for event in self.drain_events():
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                details = params["exceptionDetails"]
                errors.append(details.get("exception", {}).get("description") or details["text"])
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                errors.append(" ".join(str(a.get("value", a)) for a in params.get("args", [])))
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                errors.append(params["entry"]["text"])
        return errors

    def screenshot(self, path: Path, clip: dict[str, float] | None = None) -> None:
        """Save the viewport (or the ``clip`` box: x, y, width, height in CSS px) as PNG."""
        params: dict[str, Any] = {"format": "png"}
        if clip is not None:
            params["clip"] = {**clip, "scale": 1}
        data = self.page("Page.captureScreenshot", **params)["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        with contextlib.suppress(BrowserError, OSError):
            self.send("Browser.close")
        try:
            self.process.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._to_browser, self._from_browser):
            with contextlib.suppress(OSError):
                os.close(fd)
        if self.process.stderr is not None:
            self.process.stderr.close()
