"""validate/fresh's batches (cases.BATCHES): the first batch kept as it was predicted and measured, the atomics batch
well-formed and covered by its committed predictions and measurement, and check.py reading each batch's own files.
No GPU, no prediction: JSON and source text only."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import re
import sys
from pathlib import Path

import pytest

from gpusim.frontend.args import TensorArg, parse_arg

FRESH = Path(__file__).resolve().parent.parent / "validate" / "fresh"
MEASURED = FRESH.parent / "measurements"


def _load(name: str):
    if str(FRESH) not in sys.path:
        sys.path.insert(0, str(FRESH))
    spec = importlib.util.spec_from_file_location(f"fresh_{name}", FRESH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


cases = _load("cases")
check = _load("check")


def test_the_first_batch_is_the_one_predicted_and_measured_first():
    assert cases.FIRST == "2026-11-28" and cases.BATCHES[cases.FIRST] is cases.CASES
    names = [c["name"] for c in cases.CASES]
    pred = json.loads((FRESH / "predicted-2026-11-28.json").read_text())
    meas = json.loads((MEASURED / "h100" / "fresh-2026-11-28.json").read_text())
    assert names == [r["name"] for r in pred["kernels"]] == [e["name"] for e in meas["cases"]]
    # the first batch's default files: predicted-DATE.json, not another batch's (which sorts after it)
    assert check.newest_predicted().name == "predicted-2026-11-28.json"
    assert check.newest_predicted("atomics").name.startswith("predicted-atomics-")


@pytest.mark.parametrize("batch", sorted(cases.BATCHES))
def test_cases_are_well_formed(batch):
    seen = set()
    for c in cases.BATCHES[batch]:
        assert c["name"] not in seen
        seen.add(c["name"])
        kernel = cases.kernel_of(c)
        src = (FRESH / f"{kernel}.cu").read_text()
        assert re.search(rf'extern "C" __global__ void {kernel}\(', src), kernel
        if batch != cases.FIRST:  # the new batch says what each file is on its first line
            assert src.startswith("// "), kernel
        assert all(isinstance(v, int) and v > 0 for v in (*c["grid"], *c["block"]))
        for text in c["args"]:
            name, value = text.split("=", 1)
            arg = parse_arg(value, name, None, f"{c['name']} {name}")
            assert isinstance(arg, TensorArg) or name in c.get("scalars", {}) or "." not in value, text


def test_the_atomics_predictions_cover_the_batch_and_name_its_refusals():
    batch = cases.BATCHES["atomics"]
    pred = json.loads(check.newest_predicted("atomics").read_text())
    taken = [c["name"] for c in batch if not c.get("refused")]
    assert [r["name"] for r in pred["kernels"]] == taken == [r["name"] for r in pred["kernels_h100"]]
    assert pred["refused"] == {c["name"]: c["refused"] for c in batch if c.get("refused")}
    assert pred["config"] == check.config_of("atomics").name
    assert all(r["gpu__time_duration.sum"] > 0 for r in pred["kernels"])


def test_the_atomics_measurement_covers_the_batch_correctly_on_the_predicted_gpu():
    meas = json.loads((MEASURED / "h200" / "fresh-atomics-2026-11-28.json").read_text())
    assert meas["batch"] == "atomics" and not meas["failed"]
    assert [e["name"] for e in meas["cases"]] == [c["name"] for c in cases.BATCHES["atomics"]]
    assert meas["gpu"]["name"] in check.config_of("atomics").device_names
    assert all(e["correct"] is True for e in meas["cases"])
    atomics = ("lts__t_requests_op_red.sum", "lts__t_requests_op_atom.sum")
    assert all(sum(e["ncu"][k] for k in atomics) > 0 for e in meas["cases"])


def _printed(*args) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        check.compare(*args)
    return buf.getvalue()


def test_check_prints_each_batch_against_its_own_predictions():
    first = _printed(MEASURED / "h100" / "fresh-2026-11-28.json", check.newest_predicted())
    assert "warp_reduce" in first and "L2 atom req" not in first and "config" not in first
    atom = _printed(MEASURED / "h200" / "fresh-atomics-2026-11-28.json", check.newest_predicted("atomics"), False,
                    "atomics")
    assert "on NVIDIA H200" in atom and "NOT the measured GPU" not in atom
    assert re.search(r"^last_block .* refused by the front-end", atom, re.M)
    assert re.search(r"^compact_24 +405\.4 +55\.3 ", atom, re.M)


def test_the_reach_batch_was_predicted_before_it_was_measured_and_both_cover_it():
    """The 'reach' batch (what the front-end took in on 2026-12-07): its committed predictions cover every case, and
    the H100's measurement (made after them) covers them in order, each with ncu's counters."""
    batch = cases.BATCHES["reach"]
    pred = json.loads(check.newest_predicted("reach").read_text())
    assert [r["name"] for r in pred["kernels"]] == [c["name"] for c in batch] and not pred["refused"]
    assert all(r["gpu__time_duration.sum"] > 0 for r in pred["kernels"])
    meas = json.loads((MEASURED / "h100" / "fresh-reach-2026-12-07.json").read_text())
    assert meas["batch"] == "reach" and not meas["failed"]
    assert [e["name"] for e in meas["cases"]] == [c["name"] for c in batch]
    assert meas["gpu"]["name"] in check.config_of("reach").device_names
    assert all(e["ncu"]["smsp__inst_executed.sum"] > 0 for e in meas["cases"])
    printed = _printed(MEASURED / "h100" / "fresh-reach-2026-12-07.json", check.newest_predicted("reach"), False,
                       "reach")
    assert re.search(r"^cas_max +140\.8 +423\.2 +\+200\.6%", printed, re.M)


def test_the_passes_batch_was_predicted_before_it_was_measured_and_both_cover_it():
    """The 'passes' batch (row kernels that read each row two or three times): its committed predictions cover every
    case, the H100's measurement (made after them) covers them in order with ncu's counters, and the comparison
    prints what was predicted, not what the model says now (softmax3 at 16,384 columns: -33.9%)."""
    batch = cases.BATCHES["passes"]
    pred = json.loads(check.newest_predicted("passes").read_text())
    assert [r["name"] for r in pred["kernels"]] == [c["name"] for c in batch] and not pred["refused"]
    meas = json.loads((MEASURED / "h100" / "fresh-passes-2026-12-08.json").read_text())
    assert meas["batch"] == "passes" and not meas["failed"]
    assert [e["name"] for e in meas["cases"]] == [c["name"] for c in batch]
    assert all(e["ncu"]["dram__bytes_read.sum"] > 0 for e in meas["cases"])
    printed = _printed(MEASURED / "h100" / "fresh-passes-2026-12-08.json", check.newest_predicted("passes"), False,
                       "passes")
    assert re.search(r"^softmax3_16384 +230\.2 +152\.2 +-33\.9%", printed, re.M)
