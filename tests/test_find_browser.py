"""Which browser the browser tests drive, and the error for an unusable COURSE_BROWSER."""

from __future__ import annotations

import stat

import pytest

from browser.find_browser import BrowserSettingError, find_browser


def executable(path):
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def fakes(tmp_path):
    """One fake executable for each place find_browser looks."""
    names = ("course", "playwright", "chromium", "google-chrome", "bundle", "debian")
    return {name: executable(tmp_path / name) for name in names}


def search(fakes, environ=None, playwright=True, on_path=("chromium", "google-chrome")):
    return find_browser(
        environ=environ or {},
        playwright_chromium=lambda: str(fakes["playwright"]) if playwright else None,
        which=lambda name: str(fakes[name]) if name in on_path else None,
        fixed=(fakes["bundle"], fakes["debian"]),
    )


def test_course_browser_overrides_everything(fakes):
    chosen = search(fakes, environ={"COURSE_BROWSER": str(fakes["course"])})
    assert chosen == fakes["course"]


def test_then_playwrights_own_chromium(fakes):
    assert search(fakes) == fakes["playwright"]


def test_a_playwright_chromium_that_is_not_installed_is_passed_over(fakes, tmp_path):
    missing = tmp_path / "ms-playwright" / "chrome"
    found = find_browser(
        environ={},
        playwright_chromium=lambda: str(missing),
        which=lambda name: str(fakes[name]) if name == "chromium" else None,
        fixed=(),
    )
    assert found == fakes["chromium"]


def test_then_path_in_order_chromium_before_chrome(fakes):
    assert search(fakes, playwright=False) == fakes["chromium"]
    assert search(fakes, playwright=False, on_path=("google-chrome",)) == fakes["google-chrome"]


def test_then_the_app_bundle_then_debians_chromium(fakes):
    assert search(fakes, playwright=False, on_path=()) == fakes["bundle"]
    fakes["bundle"].unlink()
    assert search(fakes, playwright=False, on_path=()) == fakes["debian"]


def test_none_found_is_none_not_an_error(fakes):
    for name in ("bundle", "debian"):
        fakes[name].unlink()
    assert search(fakes, playwright=False, on_path=()) is None


def test_course_browser_that_does_not_exist_names_variable_path_and_expectation(tmp_path):
    missing = tmp_path / "no-such-chrome"
    with pytest.raises(BrowserSettingError) as error:
        find_browser(environ={"COURSE_BROWSER": str(missing)})
    message = str(error.value)
    assert "COURSE_BROWSER" in message and str(missing) in message
    assert "no such file" in message and "expected the path of a Chromium" in message


def test_course_browser_that_is_not_executable_is_refused(tmp_path):
    plain = tmp_path / "chrome"
    plain.write_text("not a program")
    with pytest.raises(BrowserSettingError, match="COURSE_BROWSER=.*is not an executable file"):
        find_browser(environ={"COURSE_BROWSER": str(plain)})
    with pytest.raises(BrowserSettingError, match="not an executable file"):
        find_browser(environ={"COURSE_BROWSER": str(tmp_path)})  # a folder
