"""Where hgemm_mma_pipelined's time goes on the H100: its twin as measured, and with parts taken out
(validate/DEVIATIONS.md, hgemm_mma_pipelined). The twin's source (validate/kernels/hgemm_mma_pipelined.cu and
hgemm_mma_common.cuh) is compiled as run_tc_sm80.py compiles it, with one textual change per variant:
- `twin`: unchanged;
- `same_tiles`: every CTA copies the tiles of CTA (0, 0) (A and B panels of 2 MiB, L2-resident): no HBM traffic;
- `no_compute`: the main loop's tile compute (ldmatrix + mma.sync) removed: copies, waits and barriers alone;
- `no_copy`: the main loop's copies removed (the prologue's stay): compute, waits and barriers alone;
- `no_barrier`: the main loop's __syncthreads removed (wrong results; timing only).

    python3 validate/micro/run_mma_ablate.py --out validate/measurements/h100/mmaablate-2026-11-26.json

Per variant and shape (4096^3 and 2048x8192x4096): one warm-up launch then the median of 20 CUDA-event times, and
ncu (unless --skip-ncu; --clock-control none) for the SM cycles, the tensor pipe's and the shared data pipe's
activity and the stall reasons.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import common  # noqa: E402

KDIR = HERE.parent / "kernels"
SHAPES = [(4096, 4096, 4096), (2048, 8192, 4096)]
LOOP_COMPUTE = "    hg_compute_tile(sc, sc + HG_TILE_BYTES, wm, wn, lane, acc);\n  }\n  hg_cp_wait<0>();"
LOOP_COPY = """    if (nt < KT) {
      const unsigned st = s0 + (nt % STAGES) * HG_STAGE_BYTES;
      hg_issue_tile_async(st, Ab, K, nt, tid);
      hg_issue_tile_async(st + HG_TILE_BYTES, Bb, K, nt, tid);
    }"""
LOOP_BARRIER = "    __syncthreads();           // ... everyone's"
TILES = "  const int bn = blockIdx.x, bm = blockIdx.y;"
VARIANTS = {
    "twin": None,
    "same_tiles": (TILES, "  const int bn = 0 * blockIdx.x, bm = 0 * blockIdx.y;"),
    "no_compute": (LOOP_COMPUTE, "  }\n  hg_cp_wait<0>();"),
    "no_copy": (LOOP_COPY, ""),
    "no_barrier": (LOOP_BARRIER, "    // (no barrier)"),
}
NCU_METRICS = [
    "gpu__time_duration.sum", "sm__cycles_elapsed.avg", "sm__cycles_elapsed.avg.per_second",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed",
    "lts__t_sectors_op_read.sum", "dram__bytes_read.sum", "smsp__inst_executed.sum",
    *(f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in (
        "short_scoreboard", "mio_throttle", "wait", "math_pipe_throttle", "dispatch_stall", "not_selected",
        "selected", "long_scoreboard", "barrier", "lg_throttle", "drain")),
]


def source(variant: str) -> str:
    import run_tc_sm80

    src = run_tc_sm80.load_source(KDIR / "hgemm_mma_pipelined.cu")
    change = VARIANTS[variant]
    if change is not None:
        old, new = change
        if src.count(old) != 1:
            raise SystemExit(f"run_mma_ablate: the twin's source changed, '{old.strip()[:40]}' not found once")
        src = src.replace(old, new)
    return src


def setup(cp, variant: str):
    mod = cp.RawModule(code=source(variant), options=("-std=c++17", "-DSTAGES=3", "-DSWIZZLE=128",
                                                      "--gpu-architecture=sm_90a"))
    f = mod.get_function("hgemm_mma_pipelined")
    f.max_dynamic_shared_size_bytes = 3 * 32768
    return f


def buffers(cp, shape):
    M, N, K = shape
    rs = cp.random.RandomState(1)
    a = (rs.standard_normal((M, K), dtype=cp.float32).view(cp.uint32) >> 16).astype(cp.uint16)
    b = (rs.standard_normal((N, K), dtype=cp.float32).view(cp.uint32) >> 16).astype(cp.uint16)
    return a, b, cp.empty((M, N), dtype=cp.uint16)


def launcher(cp, np, f, shape, bufs):
    M, N, K = shape

    def go():
        f((N // 128, M // 128, 1), (256, 1, 1), (np.int32(M), np.int32(N), np.int32(K), *bufs), shared_mem=3 * 32768)
    return go


def child(case: int) -> None:
    import cupy as cp
    import numpy as np

    variant, si = CASES[case]
    f = setup(cp, variant)
    go = launcher(cp, np, f, SHAPES[si], buffers(cp, SHAPES[si]))
    for _ in range(3):
        go()
    cp.cuda.runtime.deviceSynchronize()


CASES = [(v, si) for si in range(len(SHAPES)) for v in VARIANTS]


def main() -> int:
    got = common.child_or_main(__doc__.splitlines()[0], "mma_ablate", child)
    if got is None:
        return 0
    a, cp, np, res, _sms, ncu = got
    for ci, (variant, si) in enumerate(CASES):
        shape = SHAPES[si]
        f = setup(cp, variant)
        go = launcher(cp, np, f, shape, buffers(cp, shape))
        times = common.event_times_ns(cp, go, n=20)
        row = {"variant": variant, "shape": list(shape), "time_ns": statistics.median(times), "times_ns": times}
        common.profile_child(ncu, NCU_METRICS, "^hgemm_mma_pipelined$", __file__, ci, [], row)
        res["results"]["mma_ablate"]["rows"].append(row)
        n = row.get("ncu", {})
        common.log(f"{variant} {shape}: {row['time_ns'] / 1e3:.1f} us; ncu cycles {n.get('sm__cycles_elapsed.avg')} "
                   f"tensor {n.get('sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active')}% "
                   f"data {n.get('l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed')}%")
        common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
