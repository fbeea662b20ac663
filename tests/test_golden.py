"""Golden tests: the full metric dict of a few small kernels, committed as JSON.

A change in any number is a change in what users see; if it is intended, regenerate with
``python -m pytest tests/test_golden.py --update-golden`` and commit the new files with the change that
caused them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"
FLOAT_REL = 1e-9

CASES = [
    ("sgemm_naive", (256, 256, 256)),
    ("sgemm_coalesced", (256, 256, 256)),
    ("sgemm_smem_blocking", (512, 512, 512)),
    ("sgemm_1d_blocktiling", (512, 512, 512)),
]


def golden_path(name: str, shape: tuple[int, ...]) -> Path:
    return GOLDEN_DIR / f"{name}_{'_'.join(map(str, shape))}.json"


def differences(expected, actual, where: str = "") -> list[str]:
    """Every metric that differs: integers, strings and booleans exactly, floats to ``FLOAT_REL``."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        out = [f"{where}{k}: missing from the prediction" for k in expected if k not in actual]
        out += [f"{where}{k}: new metric, not in the golden file" for k in actual if k not in expected]
        for k in expected:
            if k in actual:
                out += differences(expected[k], actual[k], f"{where}{k}.")
        return out
    name = where.rstrip(".")
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        pairs = enumerate(zip(expected, actual, strict=True))
        return [d for i, (e, a) in pairs for d in differences(e, a, f"{where}{i}.")]
    if isinstance(expected, float) or isinstance(actual, float):
        if (isinstance(expected, (int, float)) and isinstance(actual, (int, float))
                and not isinstance(expected, bool) and not isinstance(actual, bool)
                and math.isclose(expected, actual, rel_tol=FLOAT_REL, abs_tol=0.0)):
            return []
        return [f"{name}: golden {expected!r}, now {actual!r}"]
    if type(expected) is not type(actual) or expected != actual:
        return [f"{name}: golden {expected!r}, now {actual!r}"]
    return []


@pytest.mark.parametrize("name, shape", CASES, ids=[f"{n}_{'x'.join(map(str, s))}" for n, s in CASES])
def test_golden_metrics(name, shape, update_golden):
    from gpusim.api import predict

    metrics, _ = predict(name, shape)
    # round-trip through JSON so the comparison sees what `gpusim run --json` prints
    actual = json.loads(json.dumps(metrics))
    path = golden_path(name, shape)
    if update_golden:
        GOLDEN_DIR.mkdir(exist_ok=True)
        path.write_text(json.dumps(actual, indent=1) + "\n")
        return
    assert path.exists(), f"{path} is missing: run pytest with --update-golden to create it"
    expected = json.loads(path.read_text())
    diffs = differences(expected, actual)
    assert not diffs, f"{name} {shape}: {len(diffs)} metric(s) changed:\n  " + "\n  ".join(diffs)


def test_comparison_catches_changes():
    golden = {"a.sum": 10, "b.pct": 50.0, "v": "memory-bound", "u": {"HBM": 1.0}, "ff": False}
    assert differences(golden, dict(golden)) == []
    assert differences(golden, {**golden, "b.pct": 50.0 * (1 + 1e-12)}) == []
    assert differences(golden, {**golden, "a.sum": 11}) == ["a.sum: golden 10, now 11"]
    assert differences(golden, {**golden, "b.pct": 50.001})[0].startswith("b.pct:")
    assert differences(golden, {**golden, "u": {"HBM": 2.0}})[0].startswith("u.HBM:")
    assert differences(golden, {**golden, "ff": 0})[0].startswith("ff:")
    assert differences(golden, {**golden, "v": "L2-bound"})[0].startswith("v:")
    extra = differences(golden, {**golden, "new.sum": 1})
    assert extra == ["new.sum: new metric, not in the golden file"]
    gone = {k: v for k, v in golden.items() if k != "a.sum"}
    assert differences(golden, gone) == ["a.sum: missing from the prediction"]
