"""Triton kernels from their .py file: compiled for sm_90 without a GPU, emulated and predicted
(gpusim.frontend.triton). Triton must be importable (the [triton] extra, part of [test]): without it these fail."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import triton  # noqa: F401  (a missing triton fails the module, it does not skip it)

from gpusim.cli import main
from gpusim.frontend import args as fargs
from gpusim.frontend.machine import Launch, Machine
from gpusim.frontend.memory import PAGE_BYTES, GlobalMemory
from gpusim.frontend.trace import Recorder
from gpusim.frontend.triton import TritonError, compile_triton
from gpusim.ir import KernelError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "triton_kernels.py"
N = 2512  # three programs of 1024, the last one partial; divisible by 16, as Triton specialises n
ADD_ARGS = [f"x=f32[{N}]:arange", f"y=f32[{N}]:const(0.5)", f"out=f32[{N}]", f"n={N}"]


def emulate_every_program(build, grid):
    """Run the emulator over every program of a small launch, loops trip by trip, every value computed; returns (warp
    instructions it executed, the tensors' memory)."""
    ck = build.kernel
    bound = fargs.bind(ck, build.args)
    bufs = fargs.tensor_buffers(bound, 0)
    gmem = GlobalMemory(bufs)
    params = fargs.param_block(ck, bound, {b.name: b.base for b in bufs})
    ctas = [(x, y, z) for z in range(grid[2]) for y in range(grid[1]) for x in range(grid[0])]
    rec = Recorder()
    launch = Launch(grid, build.block, build.smem_dynamic_bytes, ck.stack_bytes, params)
    Machine(ck.program, launch, ctas, gmem, rec, 400_000, frozenset(range(len(ck.program))), data=True).run()
    return sum(int(r.warps.sum()) for r in rec.recs), {b.name: b for b in bufs}


def contents(buf, dtype) -> np.ndarray:
    pages = -(-buf.size_bytes // PAGE_BYTES)
    return np.concatenate([buf.page(p) for p in range(pages)])[:buf.size_bytes].view(dtype)


@pytest.fixture(scope="module")
def add_build():
    return compile_triton(EXAMPLES, "add", ADD_ARGS, {"BLOCK_SIZE": "1024"}, grid=(3, 1, 1))


def test_vector_add_is_compiled_as_triton_launches_it(add_build):
    b = add_build
    assert b.block == (128, 1, 1)  # 32 * num_warps (4 by default)
    assert b.signature == {"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32", "BLOCK_SIZE": "constexpr"}
    # the two scratch pointers Triton appends are bound here, not by the user
    assert [a.split("=")[0] for a in b.args] == ["x", "y", "out", "n", "global_scratch", "profile_scratch"]
    assert len(b.kernel.params) == 6
    # 16-byte aligned pointers (as Triton's launcher specialises them) give 128-bit accesses
    assert any(d.mnemonic == "LDG" and "128" in d.mods for d in b.kernel.program)


def test_vector_add_emulated_computes_x_plus_y(add_build):
    _, bufs = emulate_every_program(add_build, (3, 1, 1))
    out = contents(bufs["out"], np.float32)
    assert np.array_equal(out, np.arange(N, dtype=np.float32) + np.float32(0.5))


def test_predicted_instructions_are_the_emulated_ones(h100):
    from gpusim.api import predict_triton

    n = 4 * 1024  # four whole programs
    args = [f"x=f32[{n}]", f"y=f32[{n}]", f"out=f32[{n}]", f"n={n}"]
    build = compile_triton(EXAMPLES, "add", args, {"BLOCK_SIZE": "1024"}, grid=(4, 1, 1))
    executed, _ = emulate_every_program(build, (4, 1, 1))
    m, _ = predict_triton(EXAMPLES, "add", grid=4, args=args, constexprs={"BLOCK_SIZE": 1024}, config=h100)
    assert m["smsp__inst_executed.sum"] == executed
    assert m["launch__block_size"] == 128 and m["launch__grid_size"] == 4
    # per warp two 128-bit loads of x, two of y and two stores, 16 sectors each: every byte once
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == 4 * 4 * 4
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] * 32 == 2 * n * 4
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] * 32 == n * 4


def test_cli_runs_a_triton_file(capsys):
    rc = main(["run", str(EXAMPLES), "--kernel", "add", "--grid", "3", *[f"--arg={a}" for a in ADD_ARGS],
               "--const", "BLOCK_SIZE=1024", "--json"])
    assert rc == 0
    m = json.loads(capsys.readouterr().out)
    assert m["gpusim__kernel"] == "add" and m["gpusim__block"] == [128, 1, 1]
    assert m["gpu__time_duration.sum"] > 0



def matmul_args(size: int) -> list[str]:
    return [f"a=f16[{size}*{size}]", f"b=f16[{size}*{size}]", f"c=f16[{size}*{size}]", f"M={size}", f"N={size}",
            f"K={size}", f"stride_am={size}", "stride_ak=1", f"stride_bk={size}", "stride_bn=1", f"stride_cm={size}",
            "stride_cn=1"]


MATMUL_TILES = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}


def test_matmul_as_mma_sync_counts_every_mma(monkeypatch, h100):
    """tl.dot compiled without wgmma (DISABLE_MMA_V3, Triton's switch): each m16n8k16 HMMA of the 2x2 tiles, the
    pipelined cp.async loop summarised, the same instructions as the emulator ran iteration by iteration."""
    from gpusim.api import predict_triton

    monkeypatch.setenv("DISABLE_MMA_V3", "1")
    size, grid = 128, (2, 2, 1)
    build = compile_triton(EXAMPLES, "matmul", matmul_args(size), MATMUL_TILES, num_warps=4, num_stages=2, grid=grid)
    executed, _ = emulate_every_program(build, grid)
    m, sim = predict_triton(EXAMPLES, "matmul", grid=grid, args=matmul_args(size), constexprs=MATMUL_TILES,
                            num_warps=4, num_stages=2, config=h100)
    assert m["sm__inst_executed_pipe_tensor_op_hmma.sum"] == (size // 16) * (size // 8) * (size // 16)
    assert m["smsp__inst_executed.sum"] == executed
    assert "DISABLE_MMA_V3" in sim.kernel.notes


def test_matmul_as_wgmma_goes_through(monkeypatch, h100):
    """tl.dot compiled to wgmma (Triton's default on sm_90): the HGMMAs are asynchronous tensor-pipe work that the
    warpgroup commits and waits for (gpusim/frontend/hopper.py), every m64nNk16 counted once per warp."""
    from gpusim import ir
    from gpusim.frontend.triton import kernel_from_triton

    monkeypatch.delenv("DISABLE_MMA_V3", raising=False)
    size, grid = 128, (2, 2, 1)
    k = kernel_from_triton(EXAMPLES, "matmul", grid=grid, args=matmul_args(size), constexprs=MATMUL_TILES,
                           num_warps=4, config=h100)
    ops = k.all_ops()
    assert any(isinstance(o, ir.Compute) and o.pipe == "wgmma" and o.group == "wgmma" for o in ops)
    assert any(isinstance(o, ir.Commit) for o in ops) and any(isinstance(o, ir.WaitGroup) for o in ops)
    assert k.flops == 2 * size ** 3
    assert "DISABLE_MMA_V3" not in k.notes

DIVIDE = '''
import triton
import triton.language as tl


@triton.jit
def divide(out, d, BLOCK: tl.constexpr):
    """Integer division and remainder by a runtime value (the IMAD.HI step of the division sequence)."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + 2 * i, i // d)
    tl.store(out + 2 * i + 1, i % d)
'''


def test_division_by_a_runtime_value_is_emulated_exactly(tmp_path):
    f = tmp_path / "divide.py"
    f.write_text(DIVIDE)
    b = compile_triton(f, "divide", ["out=i32[1024]", "d=7"], {"BLOCK": 128}, grid=(4, 1, 1))
    _, bufs = emulate_every_program(b, (4, 1, 1))
    got = contents(bufs["out"], np.int32).reshape(-1, 2)
    i = np.arange(512)
    assert np.array_equal(got[:, 0], i // 7) and np.array_equal(got[:, 1], i % 7)


# --- bad input: one line, exit 2 --------------------------------------------------------------------------------
BAD = '''
import triton
import triton.language as tl


def plain(x):
    return x


@triton.jit
def needs_block(x, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(x + o, tl.load(x + o, mask=o < n), mask=o < n)
'''


@pytest.fixture
def bad_file(tmp_path):
    f = tmp_path / "bad.py"
    f.write_text(BAD)
    return f


def run_cli(capsys, *argv) -> str:
    rc = main(["run", *map(str, argv)])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith("gpusim: error: ") and err.count("\n") == 1
    return err


def test_a_file_that_fails_to_import(tmp_path, capsys):
    f = tmp_path / "broken.py"
    f.write_text("import triton\n\nraise RuntimeError('no GPU here')\n")
    err = run_cli(capsys, f, "--kernel", "k", "--grid", "1")
    assert "importing it failed: line 3: RuntimeError: no GPU here" in err
    f.write_text("import triton\nimport sys\nsys.exit(3)\n")  # a file's exit does not end gpusim
    assert "SystemExit" in run_cli(capsys, f, "--kernel", "k", "--grid", "1")
    f.write_text("def broken(:\n")
    assert "line 1: SyntaxError" in run_cli(capsys, f, "--kernel", "k", "--grid", "1")


def test_a_missing_or_non_jit_kernel(bad_file, capsys):
    err = run_cli(capsys, bad_file, "--kernel", "needs_blok", "--grid", "1", "--arg", "x=f32[64]", "--arg", "n=64")
    assert "no kernel named 'needs_blok'" in err and "did you mean 'needs_block'" in err
    err = run_cli(capsys, bad_file, "--kernel", "plain", "--grid", "1", "--arg", "x=f32[64]")
    assert "plain is a function, not a @triton.jit function" in err


def test_a_missing_constexpr_or_argument(bad_file, capsys):
    err = run_cli(capsys, bad_file, "--kernel", "needs_block", "--grid", "1", "--arg", "x=f32[64]", "--arg", "n=64")
    assert "constexpr BLOCK has no value: give --const BLOCK=VALUE" in err
    err = run_cli(capsys, bad_file, "--kernel", "needs_block", "--grid", "1", "--arg", "x=f32[64]",
                  "--const", "BLOCK=64")
    assert "missing argument: n" in err
    err = run_cli(capsys, bad_file, "--kernel", "needs_block", "--grid", "1", "--arg", "x=f32[64]", "--arg", "n=64",
                  "--arg", "BLOCK=64")
    assert "BLOCK is a tl.constexpr" in err
    err = run_cli(capsys, bad_file, "--kernel", "needs_block", "--grid", "1", "--arg", "x=f32[64]", "--arg", "n=64",
                  "--const", "BLOCK=64", "--block", "128")
    assert "--block is for a CUDA file" in err


def test_a_compile_error_names_the_line(bad_file, capsys):
    err = run_cli(capsys, bad_file, "--kernel", "needs_block", "--grid", "1", "--arg", "x=f32[64]", "--arg", "n=64",
                  "--const", "BLOCK=100")
    assert f"{bad_file}:12: needs_block does not compile: arange's range must be a power of 2" in err


def test_errors_are_kernel_errors(bad_file):
    with pytest.raises(TritonError) as e:
        compile_triton(bad_file, "needs_block", ["x=f32[64]", "n=64"], {"BLOCK": 100})
    assert isinstance(e.value, KernelError)
    with pytest.raises(KernelError, match="no such file"):
        compile_triton(bad_file.with_name("absent.py"), "k", [])



GATHER = '''
import triton
import triton.language as tl


@triton.jit
def bins(x, h, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(h + tl.load(x + o) % 16, 1)
'''


def test_an_address_from_contents_not_given_names_the_users_tensors_only(tmp_path, capsys):
    """Triton's hidden scratch parameters are not the user's to give: the line names x alone."""
    f = tmp_path / "bins.py"
    f.write_text(GATHER)
    err = run_cli(capsys, f, "--kernel", "bins", "--grid", "2", "--arg", "x=i32[256]", "--arg", "h=i32[16]:zeros",
                  "--const", "BLOCK=128")
    assert "(tensors without contents: x);" in err
