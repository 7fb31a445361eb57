"""The report pages in a real browser: headless Chromium (Debian's ``chromium-headless-shell``,
installed by ``make test``) loads ``report.html`` and ``index.html`` and a script in the page
reports broken images, horizontal overflow and elements outside the viewport.

No skip: a machine without Chromium fails here with the command that installs it.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from optzoo import registry
from optzoo.experiment.core import Claim, Preset, Result, Summary, Table, Trial
from optzoo.experiment.verdicts import bound_holds
from optzoo.report.render import write_index, write_reports

BROWSERS = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome")

#: Runs in the page once everything (the embedded PNGs included) has loaded; its JSON answer is
#: appended to the DOM, which Chromium's --dump-dom prints.
_CHECK = """<script>
window.addEventListener('load', () => {
  const vw = document.documentElement.clientWidth;
  const scrolls = e => { for (let p = e.parentElement; p; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX; if (o === 'auto' || o === 'scroll') return true; }
    return false; };
  const name = e => e.tagName.toLowerCase() + (e.className ? '.' + e.className : '')
                    + ':' + (e.textContent || e.alt || '').trim().slice(0, 40);
  const imgs = [...document.images];
  const out = {
    viewport: vw, images: imgs.length,
    broken: imgs.filter(i => !i.complete || i.naturalWidth === 0).map(i => i.alt),
    scroll_width: document.documentElement.scrollWidth,
    outside: [...document.body.querySelectorAll('*')].filter(e => {
        const r = e.getBoundingClientRect();
        return r.width > 0 && (r.right > vw + 1 || r.left < -1) && !scrolls(e); }).map(name),
    shrunk: imgs.filter(i => i.getBoundingClientRect().width > vw + 1).map(i => i.alt),
  };
  const pre = document.createElement('pre');
  pre.id = 'optzoo-check'; pre.style.display = 'none'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def _browser() -> str:
    for b in BROWSERS:
        if path := shutil.which(b):
            return path
    pytest.fail("no headless Chromium found (looked for " + ", ".join(BROWSERS) + "): "
                "`make test` installs it as root with `apt-get install chromium-headless-shell`")


def _check(page: Path, width: int) -> dict:
    """Load a copy of ``page`` with the check script in headless Chromium at ``width`` px."""
    probe = page.with_name(f".probe-{width}-{page.name}")
    probe.write_text(page.read_text().replace("</body>", _CHECK + "</body>"))
    cmd = [_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--allow-file-access-from-files", f"--window-size={width},900",
           "--virtual-time-budget=5000", "--dump-dom", probe.as_uri()]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="optzoo-check"[^>]*>(.*?)</pre>', out.stdout, re.S)
    assert m, f"the check script did not run (exit {out.returncode}): {out.stderr[-600:]}"
    import html

    return json.loads(html.unescape(m.group(1)))


def _wide_report(tmp_path: Path) -> Path:
    """A report with what breaks layouts: a many-column table with long unbreakable cells, a
    19-inch figure, a long configuration line and a claim with a long token."""
    import matplotlib

    matplotlib.use("Agg")
    from optzoo.report import figures

    out = tmp_path / "wide" / "quick"
    out.mkdir(parents=True)
    fig, axes = figures.grid(4, panel=(4.75, 4.2))
    for i, ax in enumerate(axes):
        figures.category_panel(ax, {"connectivity": [1.0 + i, 1.2 + i, 0.9 + i],
                                    "sysadmin": [2.0, 2.5, 2.2], "sailing": [450.0, 430.0, 470]})
    fig_ = figures.save(fig, out / "wide.png", "four panels " * 20)
    cols = [f"column_with_a_long_name_{i}" for i in range(14)]
    table = Table("a wide table", cols, [[f"{1e6 * (i + 1):.6g} ± 0.0001234"] * 14
                                         for i in range(3)])
    claim = Claim("x" * 300, "evidence_" * 40, bound_holds([0.1, 0.2, 0.3], 1.0))
    results = [Result(Trial("m", "p", s, {"k": 1}), {"v": 1.0}) for s in range(3)]

    paper = registry.Paper("wide", "A paper whose title is long " * 4, "M", "experiment",
                           None, None)
    write_reports(out, paper, "quick", Preset(seeds=3), Summary(tables=[table], figures=[fig_],
                                                             claims=[claim],
                                                             notes=["n" * 500]),
                  results, {"a_very_long_configuration_key" * 5: math.pi})
    return out / "report.html"


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> list[Path]:
    root = tmp_path_factory.mktemp("runs")
    cli = shutil.which("optzoo") or str(Path(__file__).resolve().parents[2] / ".venv/bin/optzoo")
    subprocess.run([cli, "reproduce", "_selftest", "--preset", "smoke", "--out", str(root),
                    "--quiet"], check=True, capture_output=True, timeout=300,
                   env={**__import__("os").environ, "MPLBACKEND": "Agg"})
    wide = _wide_report(root)
    write_index(root, list(registry.PAPERS))
    return [root / "_selftest" / "smoke" / "report.html", wide, root / "index.html"]


@pytest.mark.parametrize("width", [1280, 700])
def test_report_pages_render_without_broken_images_or_overflow(pages, width):
    images = []
    for page in pages:
        res = _check(page, width)
        images.append(res["images"])
        assert res["viewport"] > 0
        assert not res["broken"], f"{page.name}: broken images {res['broken']}"
        assert res["scroll_width"] <= res["viewport"] + 1, (
            f"{page}: page scrolls sideways at {width} px ({res['scroll_width']} px wide); "
            f"outside: {res['outside'][:5]}")
        assert not res["outside"], f"{page}: elements outside the viewport: {res['outside'][:5]}"
        assert not res["shrunk"]
    assert images[:2] == [1, 1]  # the self-test's figure and the wide report's


def test_index_links_resolve(pages):
    index = pages[2]
    hrefs = re.findall(r"href='([^']+)'", index.read_text())
    assert "_selftest/smoke/report.html" not in hrefs or (index.parent / "_selftest").exists()
    for h in hrefs:
        assert (index.parent / h).is_file(), f"index links to a missing page: {h}"


def test_the_check_sees_a_broken_image_and_an_overflow(tmp_path):
    """The probe itself can fail: a page with a missing image and a 3000 px block."""
    page = tmp_path / "bad.html"
    page.write_text("<!doctype html><html><body><img src='missing.png' alt='gone'>"
                    "<div style='width:3000px'>x</div></body></html>")
    res = _check(page, 1280)
    assert res["broken"] == ["gone"]
    assert res["scroll_width"] > 1281 and res["outside"]
