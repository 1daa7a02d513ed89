"""The dashboard in a real browser, looked at: `tcdb dashboard` over the demo database (SQLite
and PostgreSQL), every page in headless Chromium at two window sizes.

Driven by Playwright's Python API with Debian's `chromium` (`executable_path`), so no browser
download is needed. Skips when chromium or playwright is missing, except under CI=true.

On PostgreSQL the pages are visited once more (at 1400×900) on a second dashboard that reads
the same database as a role with SELECT only (`tcdb db grant-readonly`).

Each page must show no exception or error box, nothing wider than the window (nor a table that
scrolls sideways), every chart drawn at a readable size, no "None"/"nan" text, no Deploy button,
and open on the demo collection although an empty one comes first alphabetically. Screenshots
go to `$TCDB_SCREENSHOTS/<database>` (the role's to `postgres-readonly`) when set, else under
pytest's tmp folder; the test prints where.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from tcdb.operations import Database
from tests.builders import PAGES
from tests.databases import BACKENDS, create_database, read_only_role

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
IN_CI = os.environ.get("CI", "").lower() == "true"
VIEWPORTS = [(1400, 900), (1024, 800)]  # a wide screen, a projector
DEMO = "longeval-demo"
# Where a page must open: the collection that changed last, or the last one with something to
# show on the page (source bias needs documents labelled human or llm: the demo's Cocktail one).
OPENS_ON = {"source_bias": "cocktail-demo"}
EMPTY = "aaa-empty"  # alphabetically first, created first: the pages must not open on it
MIN_CHART_HEIGHT = 120  # px: below this a chart is squashed
# Where each page lives: the default page (Overview) at / — Streamlit ignores a default page's
# url_path, so /overview is "Page not found" and must not be linked from anywhere.
PATHS = {name: "/" if name == "overview" else f"/{name}" for name in PAGES}

pytestmark = [pytest.mark.browser, pytest.mark.slow]


class Served(NamedTuple):
    """A demo database served: its backend, the dashboard's base URL and, on PostgreSQL, the
    URL of a read-only role and the base URL of a second dashboard reading as that role."""

    backend: str
    base: str
    reader: str | None
    reader_base: str | None

# Every visible element of the page (outermost only) that reaches past the right edge of the
# main area, unless a scrolling or hidden box of its own inside the main area clips it (the
# main area's own scrolling does not count: what it hides is cut off); the page scrolling
# sideways; every data grid that scrolls sideways.
OVERFLOW_JS = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const width = document.documentElement.clientWidth;
  const limit = Math.min(width, main.getBoundingClientRect().right);
  const name = (e) => (e.dataset.testid || e.className.baseVal || e.className || e.tagName)
    .toString().slice(0, 60);
  const found = [];
  const reported = new Set();
  if (document.documentElement.scrollWidth > width + 1) found.push('the page scrolls sideways');
  for (const e of main.querySelectorAll('*')) {
    const r = e.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || r.right <= limit + 1) continue;
    let skip = false;
    for (let a = e.parentElement; a && a !== main; a = a.parentElement) {
      if (reported.has(a) || (getComputedStyle(a).overflowX !== 'visible'
                              && a.getBoundingClientRect().right <= limit + 1)) {
        skip = true; break;
      }
    }
    if (skip) continue;
    reported.add(e);
    const box = e.closest('[data-testid="stElementContainer"]');
    const what = box ? (box.querySelector('[data-testid]') || box).dataset.testid : '';
    found.push(`${name(e)} (${what}) reaches ${Math.round(r.right)} px of ${Math.round(limit)}`);
  }
  for (const grid of main.querySelectorAll('[data-testid="stDataFrame"] .dvn-scroller')) {
    if (grid.scrollWidth > grid.clientWidth + 2) {
      const box = grid.closest('[data-testid="stDataFrame"]');
      const header = Array.from(box.querySelectorAll('th')).map((h) => h.textContent).join('|');
      found.push(`table scrolls sideways (${grid.scrollWidth} > ${grid.clientWidth}): ${header}`);
    }
  }
  return found;
}"""

# Per chart: the size of what Vega drew (canvas or svg; charts still drawing have none) and
# the width of the box Streamlit gives it (a wider drawing is cut off on the right).
# The charts shown: those of a tab not chosen are hidden (each tab is looked at in its turn).
SHOWN_CHARTS = """Array.from(document.querySelectorAll('[data-testid="stVegaLiteChart"]'))
  .filter((c) => c.offsetParent !== null)"""
CHARTS_JS = """() => """ + SHOWN_CHARTS + """
  .map((c) => { const g = c.querySelector('canvas, svg');
                const box = c.closest('[data-testid="stElementContainer"]')
                  .getBoundingClientRect().width;
                if (!g) return [0, 0, box];
                const r = g.getBoundingClientRect(); return [r.width, r.height, box]; })"""

# Per chart (SVG), every text a reader cannot read whole: cut short by Vega with "…", on top
# of another text, or reaching past the drawing's box (cut off). Labels Vega hid because they
# would overlap (opacity 0) do not count.
TEXTS_JS = """() => {
  const found = [];
  """ + SHOWN_CHARTS + """.forEach((chart, i) => {
    const svg = chart.querySelector('svg');
    if (!svg) return;
    const box = svg.getBoundingClientRect();
    const shown = Array.from(svg.querySelectorAll('text')).filter((t) => {
      if (!t.textContent.trim()) return false;
      for (let e = t; e && e !== svg; e = e.parentElement) {
        const style = getComputedStyle(e);
        if (style.opacity === '0' || style.fillOpacity === '0'
            || style.visibility === 'hidden') return false;
      }
      return true;
    }).map((t) => [t.textContent, t.getBoundingClientRect()]);
    for (const [text, r] of shown) {
      if (text.includes('…')) found.push(`chart ${i + 1}: "${text}" is cut short`);
      // a text's box is its line's, a few px taller than its letters
      if (r.left < box.left - 5 || r.right > box.right + 5 || r.top < box.top - 5
          || r.bottom > box.bottom + 5) found.push(`chart ${i + 1}: "${text}" is cut off`);
    }
    for (let a = 0; a < shown.length; a++) {
      for (let b = a + 1; b < shown.length; b++) {
        const [ta, ra] = shown[a];
        const [tb, rb] = shown[b];
        const w = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left);
        const h = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
        if (w > 2 && h > 2) found.push(`chart ${i + 1}: "${ta}" on top of "${tb}"`);
      }
    }
  });
  return found;
}"""

MISSING = re.compile(r"(?<![\w.])(None|nan|NaN|NaT|null)(?![\w.])")


def _missing() -> str | None:
    if CHROMIUM is None:
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


def _screenshots(backend: str, tmp_path: Path) -> Path:
    root = os.environ.get("TCDB_SCREENSHOTS")
    folder = (Path(root) if root else tmp_path / "screenshots") / backend
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.png"):
        old.unlink()
    print(f"\nscreenshots of the dashboard on {backend}: {folder}")
    return folder


@pytest.fixture(params=BACKENDS)
def demo_dashboard(request: pytest.FixtureRequest, tmp_path: Path,
                   monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    """The small demo (plus an empty collection) served by `tcdb dashboard --port N` on each
    database; on PostgreSQL a second dashboard serves the same database as a read-only role
    made by `tcdb db grant-readonly`."""
    reason = _missing()
    if reason:
        if IN_CI:
            pytest.fail(f"the browser test must run under CI=true: {reason}")
        pytest.skip(reason)
    backend = str(request.param)
    databases = create_database(backend, tmp_path)
    url = next(databases)
    try:
        _fill_demo(url, tmp_path, monkeypatch)
        with contextlib.ExitStack() as stack:
            base = stack.enter_context(_serve(url, tmp_path / "dashboard.log"))
            reader = reader_base = None
            if backend == "postgres":
                reader = stack.enter_context(read_only_role(url))
                reader_base = stack.enter_context(_serve(reader,
                                                         tmp_path / "dashboard-reader.log"))
            yield Served(backend, base, reader, reader_base)
    finally:
        next(databases, None)


def _fill_demo(url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tcdb.catalog.collections import add_collection
    from tcdb.demo.run import run_demo
    from tcdb.storage import db

    monkeypatch.setenv("TCDB_DATABASE_URL", url)
    monkeypatch.setenv("IR_DATASETS_HOME", os.environ.get("IR_DATASETS_HOME", ""))
    add_collection(Database(),
                   EMPTY, description="An empty collection, first in alphabetical order")
    run_demo(Database(), tmp_path / "demo", n_documents=3000, n_topics=40, depth=200)
    db.dispose_engine(url)


@contextlib.contextmanager
def _serve(url: str, log_path: Path) -> Iterator[str]:
    """`tcdb dashboard --port N` on `url` until the block ends; yields its base URL."""
    port = _free_port()
    tcdb = Path(sys.executable).with_name("tcdb")
    command = [str(tcdb)] if tcdb.exists() else [sys.executable, "-m", "tcdb"]
    log = log_path.open("wb")
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


def _settle(page: Any, title: str, charted: bool = False) -> None:
    """Wait until the page's script has finished and every chart is drawn; on a `charted`
    page, until at least one chart is there too. Streamlit loads its chart component lazily,
    after the script has finished, so on a busy machine a page can be done and still show
    no chart for a while: an empty page passes "every chart is drawn"."""
    page.get_by_role("heading", name=title, level=1).wait_for(timeout=60_000)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)
    drawn = f"({CHARTS_JS})().every(([w, h]) => w > 0 && h > 0)"
    if charted:
        drawn = f"({CHARTS_JS})().length > 0 && {drawn}"
    with contextlib.suppress(Exception):  # the assertions below say which chart is missing
        page.wait_for_function(f"() => {drawn}", timeout=60_000 if charted else 15_000)
    page.wait_for_timeout(400)


def _full_screenshot(page: Any, path: Path, width: int, height: int) -> None:
    """The whole page: Streamlit scrolls inside its main block, so the window grows to fit."""
    tall = page.evaluate("""() => Math.max(...Array.from(document.querySelectorAll(
        '[data-testid="stMain"], [data-testid="stAppViewContainer"], section.main'))
        .map((e) => e.scrollHeight), document.documentElement.scrollHeight)""")
    page.set_viewport_size({"width": width, "height": max(height, int(tall) + 40)})
    page.wait_for_timeout(400)
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size({"width": width, "height": height})


def _look(page: Any, name: str, charted: bool = True) -> list[str]:
    """What is wrong with the page as shown: one line per problem (`charted`: it must show a
    chart; a part of a page in tabs may hold tables only)."""
    problems = []
    for kind in ('[data-testid="stException"]', '[data-testid="stAlertContentError"]',
                 '[role="dialog"]'):
        boxes = page.locator(kind)
        if boxes.count():
            problems.append(f"{kind}: {boxes.first.inner_text()[:300]}")
    problems += page.evaluate(OVERFLOW_JS)
    sizes = page.evaluate(CHARTS_JS)
    if not sizes and charted:
        problems.append("no chart")
    for i, (w, h, box) in enumerate(sizes):
        if w <= 0 or h < MIN_CHART_HEIGHT:
            problems.append(f"chart {i + 1} drawn at {w:.0f}×{h:.0f} px")
        if w > box + 2:
            problems.append(f"chart {i + 1} is {w:.0f} px wide in a {box:.0f} px box")
    problems += page.evaluate(TEXTS_JS)
    # Table cells are drawn on a canvas: tests/test_dashboard.py checks that every table shows
    # a dash for a missing value; here, all the text of the page.
    for line in page.locator('[data-testid="stMain"]').inner_text().splitlines():
        if MISSING.search(line):
            problems.append(f"missing value shown: {line.strip()[:120]!r}")
    if page.locator('[data-testid="stAppDeployButton"]').count():
        problems.append("a Deploy button")
    chosen = page.get_by_role("combobox", name="Collection")
    expected = OPENS_ON.get(name.split(" ")[0], DEMO)
    if chosen.count() and chosen.input_value() != expected:
        problems.append(f"opened on collection {chosen.input_value()!r}, not {expected}")
    if "tcdb" not in page.title():
        problems.append(f"window title {page.title()!r}")
    return [f"{name}: {p}" for p in problems]


def _visit(browser: Any, base: str, shots: Path, width: int, height: int) -> list[str]:
    """Every page at one window size: a screenshot each, and what is wrong with it."""
    page = browser.new_page(viewport={"width": width, "height": height})
    problems: list[str] = []
    try:
        for name, title in PAGES.items():
            page.goto(f"{base}{PATHS[name]}", wait_until="networkidle")
            _settle(page, title, charted=name != "pools")
            if name == "pools":  # the simulation's chart is drawn on demand
                page.get_by_role("button", name="Simulate").click()
                page.get_by_text("simulation-", exact=False).first.wait_for(timeout=300_000)
                _settle(page, title, charted=True)
            _full_screenshot(page, shots / f"{name}-{width}.png", width, height)
            problems += _look(page, f"{name} at {width}×{height}")
            tabs = page.get_by_role("tab")
            for i in range(1, tabs.count()):  # a page in parts: each part looked at in turn
                tab = tabs.nth(i)
                part = tab.inner_text().strip()
                tab.click()
                _settle(page, title, charted=False)
                _full_screenshot(page, shots / f"{name}-tab{i}-{width}.png", width, height)
                problems += _look(page, f"{name} ({part}) at {width}×{height}", charted=False)
            if tabs.count():
                tabs.first.click()
            links = page.locator('[data-testid="stSidebarNav"] a').evaluate_all(
                "(links) => links.map((a) => a.getAttribute('href'))")
            if sorted(links) != sorted(f"{base}{path}" for path in PATHS.values()):
                problems.append(f"{name}: the pages are linked as {links}")
    finally:
        page.close()
    return problems


def _connections_of(reader: str) -> int:
    """How many server connections the role of the URL `reader` holds now."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    from tests.databases import POSTGRES_URL

    engine = create_engine(POSTGRES_URL)
    with engine.connect() as conn:
        n = conn.execute(text("SELECT count(*) FROM pg_stat_activity WHERE usename = :r"),
                         {"r": make_url(reader).username}).scalar_one()
    engine.dispose()
    return int(n)


def test_every_page_looks_right(demo_dashboard: Served, tmp_path: Path) -> None:
    """… and on PostgreSQL, every page again as the read-only role (one window size)."""
    from playwright.sync_api import sync_playwright

    backend, base, reader, reader_base = demo_dashboard
    shots = _screenshots(backend, tmp_path)
    problems: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for width, height in VIEWPORTS:
                problems += _visit(browser, base, shots, width, height)
            if reader and reader_base:
                reader_shots = _screenshots(f"{backend}-readonly", tmp_path)
                problems += [f"as the read-only role: {problem}" for problem in
                             _visit(browser, reader_base, reader_shots, *VIEWPORTS[0])]
                assert _connections_of(reader) >= 1  # the pages were read as that role
        finally:
            browser.close()
    assert {f"{n}-{w}.png" for n in PAGES for w, _ in VIEWPORTS} <= {
        p.name for p in shots.iterdir()}
    assert not problems, f"screenshots in {shots}:\n" + "\n".join(problems)


# Whatever of the page would fetch or link the hostile addresses, or run their handlers.
HOSTILE_JS = """() => {
  const main = document.querySelector('[data-testid="stApp"]') || document.body;
  const bad = [];
  for (const img of main.querySelectorAll('img')) {
    const src = img.getAttribute('src') || '';
    if (src.includes('127.0.0.1:9') || src === 'x') bad.push('img ' + src);
  }
  for (const a of main.querySelectorAll('a[href]')) {
    const href = a.getAttribute('href');
    if (href.includes('127.0.0.1:9') || href.startsWith('mailto:')) bad.push('link ' + href);
  }
  for (const e of main.querySelectorAll('[onerror]')) bad.push('handler on ' + e.tagName);
  return bad;
}"""


def test_hostile_names_stay_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A collection whose description, run tags, queries, pool and publications hold Markdown
    images and links to 127.0.0.1:9, HTML with handlers and spreadsheet formulas: on every page
    no <img> or link to them, no request to them, no dialog, no chart text cut short with "…"
    (the tags are up to 35 characters long), cut off or overlapping; the description reads
    as text."""
    from playwright.sync_api import sync_playwright

    from tests.hostile import COLLECTION, DESCRIPTION, TAGS, seed_hostile

    reason = _missing()
    if reason:
        if IN_CI:
            pytest.fail(f"the browser test must run under CI=true: {reason}")
        pytest.skip(reason)
    databases = create_database("sqlite", tmp_path)
    url = next(databases)
    monkeypatch.setenv("TCDB_DATABASE_URL", url)
    try:
        seed_hostile(tmp_path / "hostile")
        with _serve(url, tmp_path / "dashboard.log") as base, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            requested: list[str] = []
            dialogs: list[str] = []
            page.route("http://127.0.0.1:9/**", lambda route: (
                requested.append(route.request.url), route.abort()))
            page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
            problems: list[str] = []
            texts: dict[str, str] = {}
            try:
                for name, title in PAGES.items():
                    page.goto(f"{base}{PATHS[name]}?collection={COLLECTION}&pivot=bm25",
                              wait_until="networkidle")
                    _settle(page, title)
                    problems += [f"{name}: {bad}" for bad in page.evaluate(HOSTILE_JS)]
                    # names longer than a column (35 characters) are never cut with "…",
                    # nor any chart text cut off at the drawing's edge or drawn over another
                    problems += [f"{name}: {bad}" for bad in page.evaluate(TEXTS_JS)]
                    texts[name] = page.locator('[data-testid="stMain"]').inner_text()
                page.goto(f"{base}/compare?collection={COLLECTION}", wait_until="networkidle")
                _settle(page, PAGES["compare"])
                page.get_by_role("combobox", name="Runs").focus()  # a click may hit a chip's ×
                page.keyboard.press("ArrowDown")
                page.locator('[role="option"]').first.wait_for(timeout=10_000)
                options = page.locator('[role="option"]').all_inner_texts()
                chips = page.locator('[data-testid="stSidebar"]').inner_text()
                problems += [f"runs list: {bad}" for bad in page.evaluate(HOSTILE_JS)]
            finally:
                browser.close()
    finally:
        next(databases, None)
    assert not problems, problems
    assert not requested, requested
    assert not dialogs, dialogs
    # exactly the text, as a reader sees and copies it: nothing invisible added
    assert not [name for name, text in texts.items() if "\u2060" in text]
    shown = texts["overview"]
    assert DESCRIPTION in " ".join(shown.split()), shown[:2000]
    # The runs picker: chosen tags as chips, the others as options, each as plain text.
    assert options and all(tag in options or tag in chips for tag in TAGS.values()), (
        options, chips)
