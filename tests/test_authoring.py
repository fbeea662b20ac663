"""Your own kernel (issue 9): the loader (--kernels, GPUSIM_KERNELS, entry points), the authoring API, the
guide's example kernels and the one-line errors for bad kernel files."""

from __future__ import annotations

import os
import re
import textwrap

import pytest

from gpusim import loader
from gpusim.cli import main
from gpusim.ir import REGISTRY
from tests.conftest import REPO

EXAMPLES = REPO / "examples"


@pytest.fixture(autouse=True)
def _isolated_registry():
    """Each test loads its own files: restore the registry and the loader's memory afterwards."""
    loader.load()
    saved, sources = dict(REGISTRY), set(loader._loaded_sources)
    yield
    REGISTRY.clear()
    REGISTRY.update(saved)
    loader._loaded_sources.clear()
    loader._loaded_sources.update(sources)


GOOD = '''
from gpusim.authoring import Kernel, Launch, Loop, Mem, Tensor, register

@register("{name}", shape_names=("N",))
def build(shape):
    (n,) = shape
    body = (Mem("ld", "global", "ld", 4, {addr}, "x"),)
    return Kernel("{name}", shape, Launch((n // 128, 1, 1), (128, 1, 1), 16, 0),
                  tensors=(Tensor("x", 4 * n),), loop=Loop(1, body))
'''


def _kernel_file(tmp_path, name: str, addr: str = "lambda c: (c.bx * 128 + c.tid) * 4", fname: str = "k.py"):
    path = tmp_path / fname
    path.write_text(GOOD.format(name=name, addr=addr))
    return path


def _error(capsys, argv) -> str:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_user_kernel_without_flops_docstring_or_twin_runs_and_leads_with_bytes(tmp_path, capsys):
    path = _kernel_file(tmp_path, "user_copy_a")
    assert main(["run", "user_copy_a", "--shape", "65536", "--kernels", str(path)]) == 0
    out, _ = capsys.readouterr()
    assert "DRAM throughput" in out and "declares no FLOPs: its rate is its DRAM throughput" in out
    assert "GFLOP/s" not in out


def test_list_says_where_each_kernel_came_from(tmp_path, capsys):
    path = _kernel_file(tmp_path, "user_copy_b")
    assert main(["list", "--kernels", str(tmp_path)]) == 0
    out, _ = capsys.readouterr()
    lines = out.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("user_copy_b "))
    assert lines[i + 1].strip() == f"from {path}"
    j = next(k for k, line in enumerate(lines) if line.startswith("sgemm_naive "))
    block = lines[j + 1:next(k for k in range(j + 1, len(lines)) if lines[k] and not lines[k][0].isspace())]
    assert any(line.strip() == "from kernels_ir.sgemm" for line in block)  # under its description


def test_gpusim_kernels_environment_path_list(tmp_path, capsys, monkeypatch):
    (tmp_path / "a").mkdir()
    a = _kernel_file(tmp_path / "a", "user_env_a")
    b = _kernel_file(tmp_path, "user_env_b", fname="b.py")
    monkeypatch.setenv("GPUSIM_KERNELS", os.pathsep.join([str(a), str(b)]))
    assert main(["list"]) == 0
    out, _ = capsys.readouterr()
    assert "user_env_a " in out and "user_env_b " in out


def test_builtins_declared_as_an_entry_point():
    text = (REPO / "pyproject.toml").read_text()
    assert '[project.entry-points."gpusim.kernels"]' in text and 'builtin = "kernels_ir"' in text
    assert "import kernels_ir" not in (REPO / "gpusim" / "ir.py").read_text()
    assert REGISTRY["sgemm_naive"].origin == "kernels_ir.sgemm"


def test_missing_kernels_path(capsys):
    line = _error(capsys, ["list", "--kernels", "no/such/dir"])
    assert line == "gpusim: error: --kernels 'no/such/dir': no such file or folder"


def test_two_kernels_with_one_name_name_both_files(tmp_path, capsys):
    a = _kernel_file(tmp_path, "user_twice", fname="a.py")
    b = _kernel_file(tmp_path, "user_twice", fname="b.py")
    line = _error(capsys, ["list", "--kernels", str(a), "--kernels", str(b)])
    assert "'user_twice' is defined twice" in line and str(a) in line and str(b) in line


@pytest.mark.parametrize("text, expect", [
    ("x = 1\ndef f(:\n", ":2: SyntaxError"),
    ("import numpy\nimport no_such_module_xyz\n", ":2: ModuleNotFoundError: No module named 'no_such_module_xyz'"),
    ("\n\nraise RuntimeError('boom')\n", ":3: RuntimeError: boom"),
])
def test_kernel_file_that_fails_to_import(tmp_path, capsys, text, expect):
    path = tmp_path / "bad.py"
    path.write_text(text)
    line = _error(capsys, ["run", "x", "--shape", "1", "--kernels", str(path)])
    assert line.startswith(f"gpusim: error: {path}{expect}")


def test_builder_that_returns_something_else(tmp_path, capsys):
    path = tmp_path / "k.py"
    path.write_text(textwrap.dedent('''
        from gpusim.authoring import register

        @register("user_not_kernel", shape_names=("N",))
        def build(shape):
            return {"not": "a kernel"}
    '''))
    line = _error(capsys, ["run", "user_not_kernel", "--shape", "128", "--kernels", str(path)])
    assert line == f"gpusim: error: user_not_kernel: the builder in {path} returned dict, not a Kernel"


def test_builder_that_raises(tmp_path, capsys):
    path = tmp_path / "k.py"
    path.write_text("from gpusim.authoring import register\n\n@register('user_raises', shape_names=('N',))\n"
                    "def build(shape):\n    return 1 / 0\n")
    line = _error(capsys, ["run", "user_raises", "--shape", "128", "--kernels", str(path)])
    assert "user_raises: the builder raised ZeroDivisionError" in line and f"{path}:5" in line


@pytest.mark.parametrize("addr, expect", [
    ("lambda c: 1 / 0 + c.tid", "address expression of 'ld' failed: division by zero"),
    ("lambda c: c.tid[:, :, :5]", "address expression of 'ld' failed"),
    ("lambda c: (c.bx * 128 + c.tid) * 4 + 4", "'ld' reads past the end of tensor x"),
])
def test_bad_address_functions(tmp_path, capsys, addr, expect):
    path = _kernel_file(tmp_path, "user_bad_addr", addr=addr)
    line = _error(capsys, ["run", "user_bad_addr", "--shape", "1024", "--kernels", str(path)])
    assert line.startswith("gpusim: error: user_bad_addr: ") and expect in line and str(path) in line


def test_skeleton_raises_until_filled_in(tmp_path, capsys):
    from gpusim import sass

    funcs = sass.parse_sass((REPO / "tests/data/sass/saxpy_loop.sass").read_text())
    out = tmp_path / "sk.py"
    out.write_text(sass.skeleton(funcs[0], tmp_path / "saxpy.cu", "my_saxpy_loop"))
    text = out.read_text()
    assert text.index("Mem('ldg") < text.index("Compute('fp32") < text.index("Mem('stg")
    line = _error(capsys, ["run", "my_saxpy_loop", "--shape", "1024", "--kernels", str(out)])
    assert re.search(r"address expression of 'ldg_\d+' failed: my_saxpy_loop: fill in the per-lane byte address "
                     r"of LDG", line), line
    assert line.endswith(f"(in {out})")


def test_guide_examples_predict_the_bank_story(capsys):
    """The guide's kernels: the shared transpose has 32-way column conflicts, padding removes them, and the
    reduction's halving steps leave lanes idle but never conflict."""
    from gpusim.api import predict

    loader.load([str(EXAMPLES)])
    lds = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
    shape = (1024,)
    naive = predict("example_transpose_naive", shape)[0]
    shared = predict("example_transpose_shared", shape)[0]
    padded = predict("example_transpose_padded", shape)[0]
    assert naive[lds] == 0 and padded[lds] == 0
    # every LDS of the column read: 32 lanes in one bank, 31 extra wavefronts; 4 per warp, 8 warps per CTA
    assert shared[lds] == 31 * 4 * 8 * (1024 // 32) ** 2
    assert padded["gpu__time_duration.sum"] < shared["gpu__time_duration.sum"]
    red = predict("example_reduce_shared", (1 << 20,))[0]
    assert red[lds] == 0 and red["gpusim__gflops"] > 0


def test_ladder_columns_follow_what_the_kernels_contain(capsys):
    assert main(["ladder", "--family", "user", "--shape", "1024", "--kernels", str(EXAMPLES)]) == 0
    out, _ = capsys.readouterr()
    assert "NOTE: unvalidated" in out  # a user's kernels have no committed measurements
    header = next(line for line in out.splitlines() if line.startswith("kernel "))
    assert "lds confl" in header and "sect/req" in header and "GFLOP/s" in header  # GFLOP/s: these run below 1 TFLOP/s
    assert "tensor%" not in header and "ldsm confl" not in header


def test_a_ladder_on_several_processes_is_the_ladder_of_one(capsys):
    # the kernels run on a process pool that loads the user's kernels itself: the same table, row for row
    outs = []
    for workers in ("1", "2"):
        assert main(["ladder", "--family", "user", "--shape", "1024", "--kernels", str(EXAMPLES),
                     "--workers", workers]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] and outs[0].count("example_") >= 8  # a table row and a verdict per kernel


def test_a_kernel_that_fails_in_a_worker_is_a_one_line_error(capsys):
    # a shape the user's 1-D kernels cannot take: the worker's KernelError reaches the command line as one line
    assert main(["ladder", "--family", "user", "--shape", "1024,1024,1024,1024,7", "--kernels", str(EXAMPLES),
                 "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpusim: error: ") and err.count("\n") == 1 and "Traceback" not in err


def test_a_pip_package_ships_kernels_through_the_entry_point_group(tmp_path, monkeypatch, capsys):
    from importlib.metadata import EntryPoint

    pkg = tmp_path / "site" / "mykernels_pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(GOOD.format(name="user_from_package", addr="lambda c: (c.bx * 128 + c.tid) * 4"))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    eps = [EntryPoint("builtin", "kernels_ir", loader.GROUP), EntryPoint("mine", "mykernels_pkg", loader.GROUP)]
    monkeypatch.setattr(loader, "entry_points", lambda group: [e for e in eps if e.group == group])
    loader._loaded_sources.discard("entry points")
    assert main(["list"]) == 0
    out, _ = capsys.readouterr()
    lines = out.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("user_from_package "))
    assert lines[i + 1].strip() == "from mykernels_pkg"
