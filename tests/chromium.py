"""Headless Chromium (Debian's package; `make chromium` installs it) for tests of HTML the project writes."""

import shutil
import subprocess

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (make chromium installs it)")


def rendered_dom(page) -> str:
    """The DOM of the file `page` (a Path) once its scripts and media have run (up to 20 s of virtual time)."""
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=20000", "--dump-dom"]
    return subprocess.run([*command, page.as_uri()], capture_output=True, text=True, timeout=120).stdout
