"""Determinism: the same command in two separate processes gives the same bytes.

The two processes get different ``PYTHONHASHSEED`` values, so any result that depends on the iteration
order of a set or dict of strings (or on anything else that changes from process to process) shows up.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _gpusim(args: list[str], seed: int, cwd: Path) -> bytes:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONHASHSEED": str(seed)}
    proc = subprocess.run([sys.executable, "-m", "gpusim.cli", *args], check=False, capture_output=True,
                          cwd=cwd, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout


@pytest.mark.parametrize("kernel, shape", [("sgemm_naive", "256,256,256"), ("sgemm_1d_blocktiling", "512,512,512")])
def test_run_json_is_byte_identical(kernel, shape, tmp_path):
    args = ["run", kernel, "--shape", shape, "--json"]
    first = _gpusim(args, 1, tmp_path)
    second = _gpusim(args, 2, tmp_path)
    assert first, "no output"
    assert first == second


def test_trace_is_byte_identical(tmp_path):
    outputs = []
    for seed in (1, 2):
        stdout = _gpusim(["trace", "sgemm_smem_blocking", "--shape", "256,256,256", "-o", "t.json"], seed, tmp_path)
        outputs.append((stdout, (tmp_path / "t.json").read_bytes()))
        (tmp_path / "t.json").unlink()
    assert outputs[0][1], "empty trace"
    assert outputs[0] == outputs[1]
