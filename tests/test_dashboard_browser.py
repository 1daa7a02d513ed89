"""One real-browser pass: `tcdb dashboard` as a subprocess, every page in headless Chromium.

Driven by Playwright's Python API with Debian's `chromium` (`executable_path`), so no browser
download is needed. Skips when chromium or playwright is missing, except under CI=true.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.test_dashboard import PAGES, seed_collection

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
IN_CI = os.environ.get("CI", "").lower() == "true"

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _missing() -> str | None:
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        return "Debian's chromium is not installed (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright Python package is not installed"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_healthy(port: int, process: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"tcdb dashboard exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health",
                                        timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"the dashboard did not answer on port {port} within {timeout} s")


@pytest.fixture
def dashboard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A seeded SQLite database served by `tcdb dashboard --port N`; yields the base URL."""
    reason = _missing()
    if reason:
        if IN_CI:
            pytest.fail(f"the browser test must run under CI=true: {reason}")
        pytest.skip(reason)
    from tcdb import db, migrate
    from tcdb.settings import get_settings

    url = f"sqlite:///{tmp_path / 'dashboard.sqlite'}"
    migrate.upgrade(url)
    monkeypatch.setenv("TCDB_DATABASE_URL", url)
    get_settings.cache_clear()
    seed_collection(tmp_path)
    db.dispose_engine(url)
    port = _free_port()
    tcdb = Path(sys.executable).with_name("tcdb")
    command = [str(tcdb)] if tcdb.exists() else [sys.executable, "-m", "tcdb"]
    log = (tmp_path / "dashboard.log").open("wb")
    process = subprocess.Popen([*command, "dashboard", "--port", str(port)],
                               env={**os.environ, "TCDB_DATABASE_URL": url},
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_healthy(port, process)
        yield f"http://127.0.0.1:{port}"
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()
        get_settings.cache_clear()


def test_every_page_renders_in_chromium(dashboard: str, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    shots = tmp_path / "screenshots"
    shots.mkdir()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            for name, title in PAGES.items():
                page.goto(f"{dashboard}/{name}?collection=dash", wait_until="networkidle")
                heading = page.get_by_role("heading", name=title, level=1)
                heading.wait_for(timeout=60_000)
                page.wait_for_function(
                    "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')",
                    timeout=60_000)
                page.wait_for_timeout(500)
                page.screenshot(path=str(shots / f"{name}.png"), full_page=True)
                errors = page.locator('[data-testid="stException"]')
                assert errors.count() == 0, f"{name}: {errors.first.inner_text()}"
                assert page.locator('[data-testid="stVegaLiteChart"]').count() >= 1, name
        finally:
            browser.close()
    assert sorted(p.name for p in shots.iterdir()) == sorted(f"{n}.png" for n in PAGES)
