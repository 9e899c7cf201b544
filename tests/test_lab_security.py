"""`make lab` serves on 127.0.0.1 only and keeps Jupyter's token authentication on."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

import psutil
import pytest

from notebook_tools import ROOT


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_lab_command_binds_loopback_and_never_disables_the_token():
    recipe = subprocess.run(
        ["make", "-n", "lab"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    command = next(line for line in recipe.splitlines() if "jupyter lab" in line)
    assert "--ServerApp.ip=127.0.0.1" in command
    for weakening in ("token=", "password=", "disable_check_xsrf", "0.0.0.0", "allow_origin"):
        assert weakening not in command


@pytest.mark.slow  # starts a JupyterLab server
def test_running_lab_refuses_requests_without_the_token():
    port = free_port()
    server = subprocess.Popen(
        ["make", "--no-print-directory", "lab", f"LAB_PORT={port}"],
        cwd=ROOT,
        env={**os.environ, "BROWSER": "true"},  # open no browser window
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/contents", timeout=2)
                pytest.fail("JupyterLab answered /api/contents without a token")
            except urllib.error.HTTPError as error:
                assert error.code == 403
                break
            except OSError:
                assert server.poll() is None, "make lab exited early"
                assert time.monotonic() < deadline, "make lab did not start in 60 s"
                time.sleep(0.3)
        listening = [
            c.laddr.ip
            for c in psutil.net_connections(kind="inet")
            if c.status == psutil.CONN_LISTEN and c.laddr.port == port
        ]
        assert listening and set(listening) == {"127.0.0.1"}
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
