"""The README's test command, with or without the -q everyone adds, ends with pytest's summary
line: pyproject's addopts has -q already, and -qq made pytest leave that line out."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SUMMARY = re.compile(r"^=* ?\d+ passed(, \d+ \w+)* in [\d.]+s( \(\d+:\d\d:\d\d\))? ?=*$")


@pytest.mark.parametrize("quiet", [[], ["-q"], ["-qq"]])
def test_a_run_ends_with_its_summary_line(quiet):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    # The README's command as it is (xdist and all), with one test process instead of one per
    # CPU: the summary line does not depend on how many there are, and each costs a start-up.
    env["PYTEST_XDIST_AUTO_NUM_WORKERS"] = "1"
    proc = subprocess.run([sys.executable, "-m", "pytest", *quiet, "-p", "no:cacheprovider",
                           "tests/ratings/test_glicko2.py"], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120)
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert lines and SUMMARY.match(lines[-1]), proc.stdout
