"""Headless chromium for the tests of synrob's HTML pages (report.html, the comparison page,
card.html, the board): a DevTools-protocol session over ``--remote-debugging-pipe`` (file
descriptors 3 and 4, NUL-separated JSON), which reports uncaught exceptions, ``console.error``
and the browser's own log (a resource that fails to load, a Content-Security-Policy violation).

:func:`page_values` opens a page at a width and evaluates expressions in it;
:func:`console_errors` reads the errors; ``needs_chromium`` skips a test without a browser
(``bash dev.sh`` installs Debian's chromium when run as root).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"),
                             shutil.which("google-chrome"), "/usr/bin/chromium")
                 if p and os.access(p, os.X_OK)), None)
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium binary found (bash dev.sh installs Debian's chromium "
                             "when run as root); the browser tests of the HTML pages need one")
#: A phone's viewport in CSS pixels.
PHONE = (390, 844)


@contextlib.contextmanager
def browser_profile() -> Iterator[str]:
    """A fresh, empty chromium profile directory, removed after."""
    with tempfile.TemporaryDirectory(prefix="synrob-chromium-", ignore_cleanup_errors=True) as d:
        yield d


def chromium_args(profile: str) -> list[str]:
    """The command line of a headless chromium with its own ``profile`` directory."""
    assert CHROMIUM is not None
    return [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--no-default-browser-check", "--disable-extensions", "--hide-scrollbars",
            "--mute-audio", f"--user-data-dir={profile}"]


def chromium(*args: str, timeout: float = 90) -> subprocess.CompletedProcess[bytes]:
    """One headless chromium run with ``args`` (``--dump-dom URL``, ``--screenshot=...``)."""
    with browser_profile() as prof:
        return subprocess.run([*chromium_args(prof), *args], capture_output=True,
                              timeout=timeout, check=False)


class DevTools:
    """A DevTools-protocol session with a headless chromium over ``--remote-debugging-pipe``."""

    def __init__(self, profile: str, timeout: float) -> None:
        self.deadline = time.monotonic() + timeout
        self.events: list[dict[str, Any]] = []
        self._buf = b""
        self._id = 0
        r_in, self._w = os.pipe()  # we write commands; chromium reads fd 3
        self._r, w_out = os.pipe()  # chromium writes fd 4; we read

        def child() -> None:  # the pipe ends onto 3 and 4, whatever numbers they had
            a, b = fcntl.fcntl(r_in, fcntl.F_DUPFD, 10), fcntl.fcntl(w_out, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [*chromium_args(profile), "--remote-debugging-pipe", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(3, 4),
            preexec_fn=child)
        os.close(r_in)
        os.close(w_out)

    def _recv(self) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("chromium did not answer in time")
            if select.select([self._r], [], [], left)[0]:
                chunk = os.read(self._r, 1 << 20)
                if not chunk:
                    raise EOFError("chromium closed the DevTools pipe")
                self._buf += chunk
        message, self._buf = self._buf.split(b"\0", 1)
        return json.loads(message)

    def call(self, method: str, params: dict[str, Any] | None = None,
             session: str | None = None) -> dict[str, Any]:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._recv()
            if reply.get("id") == self._id:
                assert "error" not in reply, (method, reply)
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str) -> None:
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self._recv())

    def open_page(self, url: str, width: int, height: int, *, mobile: bool) -> str:
        """A new tab of ``width`` x ``height`` CSS pixels showing ``url`` once loaded, with
        its runtime, log and page events on; its DevTools session id."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget",
                            {"targetId": target, "flatten": True})["sessionId"]
        for method in ("Runtime.enable", "Log.enable", "Page.enable"):
            self.call(method, session=session)
        self.call("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
            session=session)
        nav = self.call("Page.navigate", {"url": url}, session=session)
        assert not nav.get("errorText"), nav
        self.wait_for("Page.loadEventFired")
        return session

    def close(self) -> None:
        with contextlib.suppress(OSError, TimeoutError, EOFError, AssertionError):
            self.call("Browser.close")
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(10)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        os.close(self._w)
        os.close(self._r)


def console_errors(events: list[dict[str, Any]]) -> list[str]:
    """Uncaught exceptions, ``console.error``/``assert`` calls and error-level log entries."""
    errors = []
    for e in events:
        method, p = e.get("method"), e.get("params", {})
        if method == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            errors.append(f"exception: {d.get('exception', {}).get('description') or d['text']}")
        elif method == "Runtime.consoleAPICalled" and p["type"] in ("error", "assert"):
            errors.append(f"console.{p['type']}: " + " ".join(
                str(a.get("value", a.get("description"))) for a in p["args"]))
        elif method == "Log.entryAdded" and p["entry"]["level"] == "error":
            errors.append(f"log: {p['entry']['text']}")
    return errors


def page_values(url: str, expressions: Sequence[str], *, width: int, height: int,
                mobile: bool = False, timeout: float = 90) -> tuple[list[str], list[Any]]:
    """Open ``url`` in a ``width`` x ``height`` viewport once loaded, evaluate each expression
    (each returns a JSON string) in order; the console errors seen and the decoded values."""
    with browser_profile() as prof:
        tools = DevTools(prof, timeout)
        try:
            session = tools.open_page(url, width, height, mobile=mobile)
            values = [json.loads(tools.call("Runtime.evaluate", {
                "expression": e, "returnByValue": True}, session=session)["result"]["value"])
                for e in expressions]
            return console_errors(tools.events), values
        finally:
            tools.close()
