"""Every IR kernel has a CUDA twin in validate/kernels/ and the two name each other, so nobody can change one
and forget the other; a twin without hand IR (measured for the CUDA front-end only) names its launch in
validate/launches.py instead."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

import kernels_ir  # noqa: F401
from gpusim.ir import REGISTRY

REPO = Path(__file__).resolve().parent.parent
TWIN_LINE = re.compile(r"^// gpusim-twin: (kernels_ir/\w+\.py)::(\w+)$")
FRONTEND_LINE = re.compile(r"^// gpusim-twin: front-end only \(no hand IR; validate/launches\.py::(\w+)\)$")


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_ir_kernel_names_an_existing_twin_that_names_it_back(name):
    kd = REGISTRY[name]
    twin = REPO / kd.cuda_twin
    assert twin.is_file(), f"{name}: CUDA twin {kd.cuda_twin} is missing"
    first = twin.read_text().splitlines()[0]
    m = TWIN_LINE.match(first)
    assert m, f"{kd.cuda_twin}: first line must be '// gpusim-twin: kernels_ir/<file>.py::<name>', got {first!r}"
    assert m.group(2) == name, f"{kd.cuda_twin} names {m.group(2)}, not {name}"
    module = REPO / m.group(1)
    assert module.is_file() and f'"{name}"' in module.read_text(), f"{m.group(1)} does not register {name}"
    kernel_fn = re.compile(r"__global__\s+void\s+(?:__\w+__\([^)]*\)\s*)*" + name + r"\s*\(")
    assert kernel_fn.search(twin.read_text()), f"{kd.cuda_twin} has no __global__ function named {name}"


def test_every_cuda_kernel_has_an_ir_twin_or_a_frontend_launch():
    spec = importlib.util.spec_from_file_location("twin_launches", REPO / "validate" / "launches.py")
    launches = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = launches  # dataclasses look their module up while the file executes
    spec.loader.exec_module(launches)
    for cu in sorted((REPO / "validate" / "kernels").glob("*.cu")):
        first = cu.read_text().splitlines()[0]
        if m := FRONTEND_LINE.match(first):
            assert m.group(1) == cu.stem and cu.stem in launches.IRREGULAR, \
                f"{cu.name}: a front-end-only twin must be named after its kernel and launched by validate/launches.py"
            assert re.search(r"__global__\s+void\s+" + cu.stem + r"\s*\(", cu.read_text()), \
                f"{cu.name} has no __global__ function named {cu.stem}"
            continue
        m = TWIN_LINE.match(first)
        assert m and m.group(2) in REGISTRY, f"{cu.name} names no registered IR kernel"
