"""ldmatrix and mma.sync interleaved in one warp as hgemm_mma_pipelined's inner loop has them, without memory traffic:
does the pair run at the slower of the two units, or slower still? (validate/DEVIATIONS.md, hgemm_mma_pipelined)

    python3 validate/micro/run_ldsm_mma.py --out validate/measurements/h100/ldsmmma-2026-11-26.json [--skip-ncu]

validate/micro/ldsm_mma.cu: one CTA of 8 or 16 warps per SM on every SM; per warp and k16 step 6 ldmatrix.x4
(24 conflict-free wavefronts) and 8, 16 or 32 mma.sync m16n8k16 bf16, 4 steps per iteration. Kernels: mma alone and
both (ldmatrix alone: run_ldsm_cpasync.py's readers, 0.98 wavefronts per SM cycle); and with 16 warps and 16 mma a
step, hgemm_mma_pipelined's copies without its barrier (per iteration and warp: wait for all but the last batch, then
8 cp.async.cg of 16 B per lane from the CTA's 256 KiB window): alone, beside the mma, beside both; and beside the
mma from a 16 KiB window, 2 copies a batch, or 8 of 4 B (cp.async.ca); and FFMA (4 per mma) alone and beside the
copies. Per case the
median over 5 launches (after 2) of each SM's window (first warp start to last warp end, clock64; median over SMs):
SM cycles per iteration of all its warps, mma.sync FLOP, ldmatrix wavefronts and copied bytes per SM cycle. With ncu
(unless --skip-ncu): the stall reasons and pipe activity of each case with ldmatrix or copies.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

ITERS = 2000
# (warps per SM, kernel mode, mma.sync per k16 step, kernel suffix, window bytes per CTA, copies per batch, bytes per
# copy and lane); modes: 1 mma alone, 3 ldmatrix and mma, 4 copies alone, 5 copies and mma, 7 copies, ldmatrix and
# mma, 8 FFMA instead of the mma (4 per mma), 12 copies and FFMA. The copies read their CTA's window again and again
# (256 KiB: L2-resident, 33 MiB over 132 SMs; 16 KiB: hot)
WINDOW = 256 * 1024
CASES = ([(w, m, n, "", WINDOW, 8, 16) for w in (8, 16) for n in (8, 16, 32) for m in (1, 3)]
         + [(16, m, 16, "", WINDOW, 8, 16) for m in (4, 5, 7)]
         + [(16, 5, 16, "", 16 * 1024, 8, 16), (16, 5, 16, "_c2", WINDOW, 2, 16), (16, 5, 16, "_w4", WINDOW, 8, 4)]
         + [(16, m, 16, "", WINDOW, 8, 16) for m in (8, 12)])
NAMES = {1: "mma", 3: "both", 4: "copies", 5: "copies+mma", 7: "copies+both", 8: "ffma", 12: "copies+ffma"}
RING = 64 * 1024  # dynamic shared memory the copies land in
NCU_METRICS = [
    "sm__cycles_elapsed.avg",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed",
    "smsp__inst_executed.sum",
    "l1tex__m_xbar2l1tex_read_bytes.sum",
    *(f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in (
        "short_scoreboard", "mio_throttle", "wait", "math_pipe_throttle", "dispatch_stall", "not_selected",
        "selected", "long_scoreboard", "no_instruction", "barrier")),
]


def setup(cp):
    mod = cp.RawModule(code=(HERE / "ldsm_mma.cu").read_text(), options=("-std=c++17", "-arch=sm_90a", f"-I{HERE}"))
    kernels = {}
    for _w, m, n, suffix, *_rest in CASES:
        f = mod.get_function(f"ldsm_mma_{m}_{n}{suffix}")
        if m & 4:
            f.max_dynamic_shared_size_bytes = RING
        kernels[m, n, suffix] = f
    return kernels


def launch(cp, np, kernels, sms: int, case, src):
    warps, mode, mmas, suffix, window, _copies, _width = case
    rec = cp.zeros(sms * 32 * 2, dtype=cp.int64)
    sink = cp.zeros(1024, dtype=cp.float32)
    kernels[mode, mmas, suffix]((sms,), (32 * warps,), (np.int32(ITERS), src, np.int64(window), sink, rec),
                                shared_mem=RING if mode & 4 else 0)
    cp.cuda.runtime.deviceSynchronize()
    r = rec.get().reshape(sms, 32, 2)[:, :warps, :]
    return r[:, :, 1].max(axis=1) - r[:, :, 0].min(axis=1)


def child(case: int) -> None:
    import cupy as cp
    import numpy as np

    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    launch(cp, np, setup(cp), sms, CASES[case], cp.ones(sms * WINDOW // 4, dtype=cp.float32))


def main() -> int:
    got = common.child_or_main(__doc__.splitlines()[0], "ldsm_mma", child)
    if got is None:
        return 0
    a, cp, np, res, sms, ncu = got
    kernels = setup(cp)
    src = cp.ones(sms * WINDOW // 4, dtype=cp.float32)
    for ci, case in enumerate(CASES):
        warps, mode, mmas, suffix, window, copies, width = case
        cyc = []
        for i in range(7):
            w = launch(cp, np, kernels, sms, case, src)
            if i >= 2:
                cyc.append(float(np.median(w)))
        c = statistics.median(cyc)
        per_it = c / ITERS
        row = {"warps": warps, "kernel": NAMES[mode], "mma_per_step": mmas, "iterations": ITERS, "sm_cycles": c,
               "runs_sm_cycles": cyc, "copy_window_bytes": window if mode & 4 else 0,
               "copies_per_batch": copies if mode & 4 else 0, "copy_width_bytes": width if mode & 4 else 0,
               "sm_cycles_per_iteration": per_it,
               "mma_flop_per_sm_cycle": warps * 4 * mmas * 4096 / per_it if mode & 1 else 0.0,
               "ffma_per_sm_cycle": warps * 16 * mmas / per_it if mode & 8 else 0.0,
               "ldsm_wavefronts_per_sm_cycle": warps * 96 / per_it if mode & 2 else 0.0,
               "copy_bytes_per_sm_cycle": warps * copies * 32 * width / per_it if mode & 4 else 0.0}
        if mode & 6:
            common.profile_child(ncu, NCU_METRICS, f"^ldsm_mma_{mode}_{mmas}{suffix}$", __file__, ci, [], row)
        res["results"]["ldsm_mma"]["rows"].append(row)
        common.log(f"{warps} warps, {NAMES[mode]}, {mmas} mma per step (copies {row['copies_per_batch']} x "
                   f"{row['copy_width_bytes']} B, window {window}): {per_it:.1f} SM cycles per iteration, "
                   f"{row['mma_flop_per_sm_cycle']:.0f} FLOP/clk, {row['ldsm_wavefronts_per_sm_cycle']:.3f} wf/clk; "
                   f"ncu {row.get('ncu', {})}")
        common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
