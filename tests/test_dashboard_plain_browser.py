"""`widgets.plain` in a real browser (issue 31): names holding Markdown, HTML, bare addresses,
Streamlit's icon and colour syntax, shown in every kind of element that renders Markdown, read
back from Chromium as a reader sees and copies them — exactly the name, no link, no image, no
icon, no emphasis, and no invisible character added."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_dashboard_browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    IN_CI,
    _free_port,
    _missing,
    _wait_healthy,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NAMES = [
    "![x](http://127.0.0.1:9/pixel.png)", "[t](u)", "<b>bold</b>", "*x*", "_y_ **z**",
    "[text](http://127.0.0.1:9/link) and <img src=x onerror=alert(1)> =cmd|' /C calc'!A0",
    ":material/home: :red[x] $x$", ":material_home: :smile:", "www.example.org a@b.org",
    "mailto:a@b.org", "- item", "1. one", "# head", "> quote", "sys_001 nDCG@10 a`b ``c``",
    "H~2~O x^2^ ~~s~~ &lt; \\*", "http://127.0.0.1:9/a.png",
]
APP = """
import json, streamlit as st
from tcdb.dashboard.widgets import plain
names = json.loads({names!r})
for i, name in enumerate(names):
    st.caption(plain(name))
    st.info(plain(name))
    st.markdown(plain(name))
    st.selectbox(plain(name), ["-"], key=f"s{{i}}")
    st.metric(plain(name), i)
st.title(plain(names[0]))
st.success("done")
"""
# Every element that shows one: the text a reader sees and copies, and what would render.
READ_JS = """() => {
  const found = [];
  const seen = document.querySelectorAll('[data-testid="stMarkdownContainer"], '
    + '[data-testid="stCaptionContainer"], [data-testid="stHeadingWithActionElements"] h1');
  for (const e of seen) {
    const bad = [...e.querySelectorAll('a[href], img, [role=img], em, strong, del, sup, sub, '
                                        + '.katex, [data-testid=stIconMaterial]')]
      .filter(x => !(x.tagName === 'A' && x.getAttribute('href').startsWith('#')))
      .map(x => x.outerHTML.slice(0, 80));
    const holder = e.parentElement.closest('[data-testid]');
    found.push({kind: e.tagName === 'H1' ? 'title' : holder.getAttribute('data-testid'),
                text: e.innerText, bad});
  }
  return found;
}"""
KINDS = {"stAlertContentInfo", "stMarkdown", "stWidgetLabel", "stMetricLabel"}  # + caption


def test_plain_names_read_back_exactly(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    reason = _missing()
    if reason:
        if IN_CI:
            pytest.fail(f"the browser test must run under CI=true: {reason}")
        pytest.skip(reason)
    app = tmp_path / "plain_app.py"
    app.write_text(APP.format(names=json.dumps(NAMES)), encoding="utf-8")
    port = _free_port()
    log = (tmp_path / "streamlit.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(app), "--server.port", str(port),
         "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env={**os.environ})
    try:
        _wait_healthy(port, process)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                requested: list[str] = []
                page.route("http://127.0.0.1:9/**", lambda route: (
                    requested.append(route.request.url), route.abort()))
                page.goto(f"http://127.0.0.1:{port}/", wait_until="networkidle")
                page.get_by_text("done").wait_for(timeout=60_000)
                for kind in ("stWidgetLabel", "stMetricLabel"):  # labels come last
                    page.wait_for_function(
                        f"document.querySelectorAll('[data-testid={kind}]').length >= "
                        f"{len(NAMES)}", timeout=60_000)
                found = page.evaluate(READ_JS)
            finally:
                browser.close()
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
        log.close()
    assert not requested, requested
    assert not [f for f in found if f["bad"]], [f for f in found if f["bad"]]
    shown: dict[str, list[str]] = {}
    for f in found:
        shown.setdefault(f["text"].strip(), []).append(f["kind"])
    for name in NAMES:  # in every kind of element (a caption is an stMarkdown too), exactly
        kinds = shown.get(name, [])
        assert set(kinds) >= KINDS and len(kinds) >= 5, (name, kinds)
    assert "title" in shown[NAMES[0]]
    assert not [t for t in shown if "\u2060" in t]
