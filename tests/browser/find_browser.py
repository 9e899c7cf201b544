"""Find a Chromium or Chrome for the browser tests, the way people have one installed.

In this order: COURSE_BROWSER (overrides everything), Playwright's own Chromium, a Chromium
or Chrome on PATH, the macOS app bundles, Debian's /usr/bin/chromium.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

VARIABLE = "COURSE_BROWSER"
ON_PATH = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
MACOS_BUNDLES = (
    Path("/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"),
    Path("/Applications/Chromium.app/Contents/MacOS/Chromium"),
)
DEBIAN = Path("/usr/bin/chromium")
LOOKED_FOR = (
    f"{VARIABLE}, Playwright's Chromium, {' / '.join(ON_PATH)} on PATH, "
    f"the macOS Chrome or Chromium app, {DEBIAN}"
)
HOW_TO_INSTALL = (
    "`.venv/bin/python -m playwright install chromium` (needs internet), or your system's "
    f"Chromium package (Debian/Ubuntu: `apt-get install chromium`), or set {VARIABLE}=/path"
)


class BrowserSettingError(ValueError):
    """COURSE_BROWSER names something that cannot be run."""


def is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_browser(
    environ: Mapping[str, str] = os.environ,
    playwright_chromium: Callable[[], str | None] = lambda: None,
    which: Callable[[str], str | None] = shutil.which,
    fixed: tuple[Path, ...] = (*MACOS_BUNDLES, DEBIAN),
) -> Path | None:
    """The browser to drive, or None when there is none. `playwright_chromium` returns where
    Playwright keeps its own Chromium (it may not be installed there)."""
    chosen = environ.get(VARIABLE)
    if chosen:
        path = Path(chosen).expanduser()
        if not path.exists():
            raise BrowserSettingError(
                f"{VARIABLE}={chosen!r}: no such file; expected the path of a Chromium or "
                "Chrome executable"
            )
        if not is_executable(path):
            raise BrowserSettingError(
                f"{VARIABLE}={chosen!r} is not an executable file; expected the path of a "
                "Chromium or Chrome executable (on macOS, the binary inside the .app bundle)"
            )
        return path
    own = playwright_chromium()
    if own and is_executable(Path(own)):
        return Path(own)
    for name in ON_PATH:
        found = which(name)
        if found:
            return Path(found)
    return next((path for path in fixed if is_executable(path)), None)
