"""Render the IR trace and memory map pages of one example in headless Chromium and save screenshots,
to check the pages in a real browser (the test suite parses them but never starts a browser).

    python tools/screenshot_debug_pages.py [--example examples/advanced/02_mixed_kernel.py] [-o shots/]

Needs a `chromium` (or `chromium-browser` / `google-chrome`) binary on PATH, e.g. `apt-get install chromium`.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def screenshot(browser: str, page: Path, png: Path, fragment: str = "") -> None:
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                    "--disable-dev-shm-usage", "--hide-scrollbars", "--window-size=1400,900",
                    f"--screenshot={png}", page.resolve().as_uri() + fragment],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--example", default=str(ROOT / "examples" / "advanced" / "02_mixed_kernel.py"))
    ap.add_argument("-o", "--output", default="debug_screenshots")
    args = ap.parse_args()
    browser = next((b for b in BROWSERS if shutil.which(b)), None)
    if browser is None:
        print("no Chromium on PATH (apt-get install chromium)", file=sys.stderr)
        return 1
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pypto", "compile", args.example, "-o", tmp], check=True, cwd=ROOT)
        build = next(Path(tmp).iterdir())
        subprocess.run([sys.executable, "-m", "pypto", "trace-ir", str(build)], check=True, cwd=ROOT)
        subprocess.run([sys.executable, "-m", "pypto", "memory-map", str(build)], check=True, cwd=ROOT)
        screenshot(browser, build / "report" / "ir_trace.html", out / "ir_trace.png", "#ExpandMixedKernel-diff")
        screenshot(browser, build / "report" / "memory_map.html", out / "memory_map.png")
    for png in sorted(out.glob("*.png")):
        print(f"wrote {png} ({png.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
