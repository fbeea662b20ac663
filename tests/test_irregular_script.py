"""validate/run_irregular.py, the device script of the irregular twins, checked without a GPU: the tensors it builds
from the ``--arg`` texts hold what gpusim's front-end generates from the same texts, its references agree with
element-by-element loops, and a whole run on a stand-in for CuPy (NumPy arrays, kernels that compute the reference)
writes a file that ``gpusim validate`` accepts."""

from __future__ import annotations

import importlib
import json
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from gpusim.frontend.memory import PAGE_BYTES, generated
from gpusim.validation import check_schema

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "validate" / "micro"))
sys.path.insert(0, str(REPO / "validate"))

ri = importlib.import_module("run_irregular")
ra = importlib.import_module("run_atomics")


def gpusim_contents(dist: str, args: tuple, dtype: str, n: int, tensor: int) -> np.ndarray:
    dt = np.dtype(ri.DTYPES[dtype])
    pages = generated(dist, dt, n * dt.itemsize, tensor, args)
    raw = np.concatenate([pages(p) for p in range(-(-n * dt.itemsize // PAGE_BYTES))])
    return raw.view(dt)[:n]


@pytest.mark.parametrize("dist,args,dtype,n,tensor", [
    ("randint", (0, 256), "i32", 3 * 4096 + 17, 0), ("randint", (0, 256), "i32", 5000, 1),
    ("mulmod", (2654435761, 1 << 18), "i32", 70000, 2), ("const", (7,), "i32", 4100, 0), ("zeros", (), "u32", 256, 1),
    ("arange", (), "i32", 9000, 0)])
def test_formula_contents_are_gpusims_byte_for_byte(dist, args, dtype, n, tensor):
    mine = ri.contents(np, dtype, n, dist, args, tensor)
    assert mine.dtype == np.dtype(ri.DTYPES[dtype])
    assert np.array_equal(mine, gpusim_contents(dist, args, dtype, n, tensor))


def test_row_pointers_and_banded_columns_follow_their_formulas():
    assert list(ri.contents(np, "i32", 5, "arange", (16,), 0)) == [0, 16, 32, 48, 64]
    assert list(ri.contents(np, "i32", 3, "arange", (2, 5), 0)) == [5, 7, 9]
    n = 40
    col = ri.contents(np, "i32", n * 16, "divmod", (16, 1, 1, -8, n), 0).reshape(n, 16)
    for r in (0, 1, 20, n - 1):
        assert list(col[r]) == [(r + k - 8) % n for k in range(16)]


def test_references_agree_with_loops():
    rng = np.random.default_rng(1)
    lengths = rng.integers(0, 6, 30)
    row_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    col = rng.integers(0, 50, row_ptr[-1]).astype(np.int32)
    val, x = rng.uniform(-1, 1, row_ptr[-1]).astype(np.float32), rng.uniform(-1, 1, 50).astype(np.float32)
    y, scale = ri.ref_spmv(np, row_ptr, col, val, x)
    for r in range(30):
        js = range(row_ptr[r], row_ptr[r + 1])
        assert y[r] == pytest.approx(sum(float(val[j]) * float(x[col[j]]) for j in js), abs=1e-9)
        assert scale[r] >= sum(abs(float(val[j]) * float(x[col[j]])) for j in js)
    v = rng.integers(0, 256, 3000).astype(np.int32)
    assert list(ri.ref_histogram(np, v)) == [int((v == b).sum()) for b in range(256)]
    s = rng.uniform(0, 1, 2048).astype(np.float32)
    scan, _ = ri.ref_scan(np, s)
    assert scan[1023] == pytest.approx(float(s[:1024].astype(np.float64).sum()))
    assert scan[1024] == pytest.approx(float(s[1024]))
    assert scan[2047] == pytest.approx(float(s[1024:].astype(np.float64).sum()))
    n = 6
    g = rng.uniform(0, 1, n * n).astype(np.float32)
    out, _ = ri.ref_stencil(np, g, n)
    a = g.reshape(n, n).astype(np.float64)
    for yy in range(n):
        for xx in range(n):
            border = xx in (0, n - 1) or yy in (0, n - 1)
            want = a[yy, xx] if border else 0.5 * a[yy, xx] + 0.125 * (a[yy, xx - 1] + a[yy, xx + 1] + a[yy - 1, xx] +
                                                                          a[yy + 1, xx])
            assert out[yy * n + xx] == pytest.approx(want)


def test_poisoned_or_wrong_outputs_fail_the_check():
    want = np.arange(8, dtype=np.float64)
    assert ri.compare(np, want.astype(np.float32), want, np.ones(8), 1e-6) == (True, 0.0)
    assert not ri.compare(np, np.full(8, np.nan, dtype=np.float32), want, np.ones(8), 1e-6)[0]
    assert not ri.compare(np, np.arange(8, dtype=np.uint32) + 1, np.arange(8), None, 0.0)[0]


@pytest.mark.parametrize("kernel,shape,params", ri.CASES)
def test_every_case_launches_enough_threads_for_its_tensors(kernel, shape, params):
    launch = ri.launches.launch_of(kernel, shape, params)
    specs = dict(ri.parse_args_text(launch.args))
    threads = int(np.prod(launch.grid)) * int(np.prod(launch.block))
    if kernel == "spmv_csr":
        nrows, ncols, nnz = shape
        assert specs["nrows"] == nrows and specs["row_ptr"][1] == nrows + 1 and specs["col"][1] == nrows * nnz
        assert specs["x"][1] == ncols and threads >= nrows
    elif kernel in ri.ACCUMULATES:
        assert specs["in"][1] == specs["n"] == shape[0] and specs["hist"][:3] == ("u32", 256, "zeros")
    elif kernel == "stencil5":
        assert launch.grid[0] * 32 >= shape[0] and launch.grid[1] * 32 >= shape[0] and specs["out"][1] == shape[0] ** 2
    else:
        assert threads * 2 == shape[0] == specs["in"][1]


def test_atomics_rows_and_ncu_ratios():
    rec = np.array([[100, 100 + 4096 * 3, 0], [100, 100 + 4096 * 3, 0]])
    row = ra.smem_row("smem_atom_add", 2, 4, 32, 256, [(rec, np.array([ra.smem_expected_total("smem_atom_add", 2, 4,
                                                                                              256)]))], np)
    assert row["cycles_per_warp_instr"] == 3.0 and row["sm_cycles_per_warp_instr"] == 1.5 and row["total_ok"]
    assert row["distinct_banks"] == 1 and row["distinct_sms"] == 1
    assert ra.smem_expected_total("smem_sts", 32, 8, 128) == 8 * 16
    assert ra.red_iters_for(1e9) == 1 and ra.red_iters_for(1.0) == ra.RED_MAX_ITERS
    micro = {"shared": {"rows": [{"kernel": k, "warps_per_sm": w, "k": kk, "stride_words": s}
                                 for k, w, kk, s in ra.smem_cases()]},
             "global_red": {"rows": [{"case": name} for name, _, _ in ra.RED_CASES]}}
    plan = ra.ncu_plan()
    metric = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum"
    rows = [{metric: 7.0, "lts__t_requests_op_red.sum": 5.0, "dram__bytes_read.sum": "n/a"} for _ in plan]
    ra.attach_ncu(micro, rows, [metric, "lts__t_requests_op_red.sum", "dram__bytes_read.sum"], 2)
    profiled = [r for r in micro["shared"]["rows"] if "ncu" in r]
    assert len(profiled) == len(ra.SMEM_KERNELS) * len(ra.SMEM_PATTERNS)
    assert all(r["warps_per_sm"] == ra.SMEM_NCU_WARPS for r in profiled)
    assert all("dram__bytes_read.sum" not in r["ncu"] for r in profiled)
    red = micro["global_red"]["rows"][0]
    assert red["lts__t_requests_op_red_per_warp_instr"] == 5.0 / (2 * ra.RED_CTAS_PER_SM * ra.RED_THREADS // 32 *
                                                                   ra.RED_UNROLL)


# ------------------------------------------------------------------------------------------------ a whole run
class _Function:
    def __init__(self, name: str) -> None:
        self.name = name
        self.attributes = {"num_regs": 32, "shared_size_bytes": 1024}

    def __call__(self, grid, block, args, **_kw) -> None:
        n = self.name
        if n == "spmv_csr":
            _, row_ptr, col, val, x, y = args
            y[:] = ri.ref_spmv(np, row_ptr, col, val, x)[0]
        elif n in ri.ACCUMULATES:
            values, hist, _ = args
            hist += np.bincount(values, minlength=256).astype(np.uint32)
        elif n.startswith("block_scan"):
            args[1][:] = ri.ref_scan(np, args[0])[0]
        elif n == "stencil5":
            args[1][:] = ri.ref_stencil(np, args[0], int(args[2]))[0]
        elif n.startswith("smem_"):
            k, _stride, iters, _inc, rec, out = args
            warps = block[0] // 32
            rec[1::3] = int(iters) * ra.SMEM_UNROLL * 2
            rec[2::3] = np.repeat(np.arange(grid[0]), warps)
            out[:] = ra.smem_expected_total(n, warps, int(k), int(iters))
        elif n == "red_pattern":
            buf, _mode, iters, _mask, _inc = args
            buf[0] += grid[0] * block[0] * int(iters) * ra.RED_UNROLL
        else:
            raise RuntimeError(f"no stand-in for {n}")


class _Event:
    clock = 0.0

    def record(self) -> None:
        _Event.clock += 0.05  # ms
        self.t = _Event.clock

    def synchronize(self) -> None:
        pass


def _fake_cupy() -> types.ModuleType:
    cp = types.ModuleType("cupy")
    cp.__getattr__ = lambda name: getattr(np, name)
    cp.__version__ = "stand-in"
    cp.asnumpy = np.asarray
    cp.RawModule = lambda code, options=(): types.SimpleNamespace(get_function=_Function)
    pool = types.SimpleNamespace(free_all_blocks=lambda: None)
    cp.get_default_memory_pool = lambda: pool
    props = {"name": b"NVIDIA H100 80GB HBM3", "multiProcessorCount": 4, "l2CacheSize": 50 << 20}
    runtime = types.SimpleNamespace(deviceSynchronize=lambda: None, getDeviceProperties=lambda _d: props,
                                    runtimeGetVersion=lambda: 13000, driverGetVersion=lambda: 13000)
    cp.cuda = types.SimpleNamespace(Event=_Event, runtime=runtime, get_elapsed_time=lambda s, f: f.t - s.t)
    return cp


def test_a_run_on_a_stand_in_writes_a_file_gpusim_validate_reads(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy())
    small = [("spmv_csr", (512, 512, 16), {"cols": "scattered"}), ("spmv_csr", (300, 300, 16), {"cols": "banded"}),
             ("histogram", (5000,), {"bins": "uniform"}), ("histogram_aggregated", (5000,), {"bins": "one"}),
             ("block_scan", (2048,), {}), ("block_scan_padded", (2048,), {}), ("stencil5", (40,), {}),
             ("stencil5", (40, 40), {})]  # a shape its launch cannot take: the case goes to "failed"
    monkeypatch.setattr(ri, "CASES", small)
    monkeypatch.setattr(ri, "FLUSH_BYTES", 4096)
    monkeypatch.setattr(ri, "TIMED", 3)
    monkeypatch.setattr(ra, "RED_BUF_WORDS", 4096)
    ncu_runs = []

    def run_ncu(ncu, metrics, regex, child, report, timeout):  # one row per launch the child would profile
        ncu_runs.append((child[child.index("--ncu-child") + 1], timeout))
        if "twins" in child:
            names = [small[int(i)][0] for i in child[child.index("--cases") + 1].split(",")]
        else:
            names = [k for k, _ in ra.ncu_plan()]
        # counters of one launch; percentages within 0..100 (gpusim.validation refuses others)
        rows = [{"ID": i, "Kernel Name": n, **{m: (50.0 + i) if ".pct" in m else 1000.0 + i for m in metrics}}
                for i, n in enumerate(names)]
        return rows, {}, "", [], "log\n"
    monkeypatch.setattr(ri.common, "find_ncu", lambda: "ncu")
    monkeypatch.setattr(ri.common, "ncu_version", lambda ncu: "stand-in")
    monkeypatch.setattr(ri.common, "ncu_available_metrics", lambda ncu: (set(), ""))
    monkeypatch.setattr(ri.common, "run_ncu", run_ncu)
    out = tmp_path / "irregular-2026-11-27.json"
    monkeypatch.setattr(sys, "argv", ["run_irregular.py", "--out", str(out)])
    assert ri.main() == 0
    data = json.loads(out.read_text())
    check_schema(data, str(out))
    assert [(e["kernel"], e["correct"]) for e in data["kernels"]] == [(k, True) for k, _, _ in small[:-1]]
    assert [f["kernel"] for f in data["failed"]] == ["stencil5"]
    spmv = data["kernels"][0]
    assert spmv["args"][1] == "row_ptr=i32[513]:arange(16)" and spmv["grid"] == [2, 1, 1]
    assert spmv["contents"]["col"] == "as gpusim generates it" and spmv["contents"]["y"] == "output (poisoned)"
    assert [k for k, _ in ncu_runs] == ["twins", "micro"] and all(t <= 300 for _, t in ncu_runs)
    assert [e["ncu"]["gpu__time_duration.sum"] for e in data["kernels"]] == [1000.0 + i for i in range(7)]
    assert "lts__t_requests_op_red.sum" in data["kernels"][2]["ncu"]
    micro = data["micro"]
    assert all(r["total_ok"] for r in micro["shared"]["rows"] + micro["global_red"]["rows"])
    assert {r["distinct_sms"] for r in micro["shared"]["rows"]} == {4}
    assert all("ncu" in r for r in micro["global_red"]["rows"])
    assert (tmp_path / "irregular-2026-11-27-ncu-log.txt").read_text() == "log\n" * 2
    assert "histogram_aggregated" in capsys.readouterr().out
