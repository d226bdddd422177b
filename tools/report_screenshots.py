"""Headless-Chromium screenshots of a report.html: the top of the page and its first detail section.

    python tools/report_screenshots.py runs/demo/report.html docs/screenshots

Writes ``report-top.png`` (the first screen: contents, provenance, overview),
``report-detail.png`` (the first folded per-model section, opened) and, for a study,
``report-table4.png`` (Table 4 with its scatters and their intervals). Needs Debian's
``chromium`` (``apt-get install chromium``); flags as the workplace notes: no sandbox (root), no
GPU, no background networking (the machine has no internet).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars")


def screenshot(page: Path, dest: Path, *, width: int = 1280, height: int = 1500) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        sys.exit("chromium is not installed (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([browser, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
                        f"--screenshot={dest}", page.resolve().as_uri()], check=True, capture_output=True, timeout=120)


def first_detail_page(html: str) -> str:
    """The page's head and its first folded section, opened, as a page of its own."""
    start = html.index('<details class="section"')
    end = html.index("</details>", start) + len("</details>")
    head = html[: html.index("<body>") + len("<body>")]
    return head + html[start:end].replace('<details class="section"', '<details open class="section"', 1) + "</body></html>"


def section_page(html: str, section_id: str) -> str | None:
    """The page's head and the section ``section_id`` alone (None when the page has none)."""
    marker = f'<section id="{section_id}">'
    if marker not in html:
        return None
    start = html.index(marker)
    end = html.index("</section>", start) + len("</section>")
    head = html[: html.index("<body>") + len("<body>")]
    return head + html[start:end] + "</body></html>"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("report", type=Path, help="a report.html")
    p.add_argument("out", type=Path, help="folder for the PNG files")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    screenshot(args.report, args.out / "report-top.png")
    with tempfile.TemporaryDirectory() as tmp:
        detail = Path(tmp) / "detail.html"
        detail.write_text(first_detail_page(args.report.read_text(encoding="utf-8")), encoding="utf-8")
        screenshot(detail, args.out / "report-detail.png", height=1400)
        table4 = section_page(args.report.read_text(encoding="utf-8"), "table4")
        if table4 is not None:
            page = Path(tmp) / "table4.html"
            page.write_text(table4, encoding="utf-8")
            screenshot(page, args.out / "report-table4.png", height=1100)
    print(f"wrote the screenshots into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
