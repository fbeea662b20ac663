"""Whether ldmatrix and cp.async's writes into shared memory share the L1TEX pipe's data stage
(validate/DEVIATIONS.md, "hgemm_mma_pipelined 11-24% slow: one L1TEX server for two stages").

    python3 validate/micro/run_ldsm_cpasync.py --out validate/measurements/h100/ldsmcp-2026-11-26.json [--skip-ncu]

validate/micro/ldsm_cpasync.cu runs one CTA per SM on `ctas` SMs: "copy" warps stream 16-B copies (cp.async.cg from
the L2 over a 256 KiB window per CTA, cp.async.ca from the L1 over a 16 KiB window, or ld.global.cg.v4 into registers)
while "reader" warps run conflict-free ldmatrix.x4 or ld.shared.v4 (4 wavefronts each). Each case runs the copy warps
alone, the readers alone, and both together. Per role and CTA: its window (first warp start to last warp end,
clock64), the copies' bytes per SM cycle and the readers' wavefronts per SM cycle; medians over CTAs and over 5
launches after 2 warm-up ones; and the two rates while both run (`overlap`). If the copies' data took one data stage
of 128 B (one wavefront) per cycle with the readers, together the wavefronts per cycle plus copied bytes / 128 per
cycle would stay at or under 1; if the two did not meet, each would keep its alone rate.
With ncu (unless --skip-ncu), the "both" launch of each case: shared-memory wavefronts by instruction kind and the
L1TEX data pipe's utilization.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

SMEM = 120 * 1024  # one CTA per SM
KIB = 1024
# (name, ctas (0: every SM), copy kind, reader kind, window bytes per CTA, copy warps, reader warps, batches, steps)
# copy kinds: 0 cp.async.cg (L2), 1 cp.async.ca (L1), 2 ld.global.cg.v4 (L2, into registers); readers: 0 ldmatrix.x4,
# 1 ld.shared.v4
CASES = [
    ("cg_ldsm_8sm", 8, 0, 0, 256 * KIB, 8, 8, 700, 1600),
    ("cg_ldsm_8sm_cp4", 8, 0, 0, 256 * KIB, 4, 8, 350, 1600),
    ("cg_ldsm_all", 0, 0, 0, 256 * KIB, 8, 8, 200, 1600),
    ("cg_lds_8sm", 8, 0, 1, 256 * KIB, 8, 8, 700, 1600),
    ("ca_ldsm_8sm", 8, 1, 0, 16 * KIB, 8, 8, 700, 1600),
    ("ldg_ldsm_8sm", 8, 2, 0, 256 * KIB, 16, 8, 300, 1600),
    ("ldg_lds_8sm", 8, 2, 1, 256 * KIB, 16, 8, 300, 1600),
]
KIND_NAMES = ({0: "cp.async.cg", 1: "cp.async.ca", 2: "ld.global.cg.v4"}, {0: "ldmatrix.x4", 1: "ld.shared.v4"})
MODES = (("cp", 1), ("ld", 2), ("both", 3))
NCU_METRICS = [
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum",
    "l1tex__data_pipe_lsu_wavefronts.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed",
    "l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum",
    "l1tex__m_xbar2l1tex_read_bytes.sum",
    "sm__cycles_elapsed.avg",
    "gpu__time_duration.sum",
]


def setup(cp):
    """The module's kernels, by (copy kind, reader kind)."""
    mod = cp.RawModule(code=(HERE / "ldsm_cpasync.cu").read_text(), options=("-std=c++17", "-arch=sm_90a"))
    kernels = {}
    for _name, _ctas, ck, lk, *_rest in CASES:
        f = mod.get_function(f"ldsm_cpasync_{ck}_{lk}")
        f.max_dynamic_shared_size_bytes = SMEM
        kernels[ck, lk] = f
    return kernels


def launch(cp, np, kernels, src, sink, sms: int, case, active: int):
    _name, ctas, ck, lk, window, cpw, ldw, batches, steps = case
    ctas = ctas or sms
    rec = cp.zeros(ctas * 32 * 2, dtype=cp.int64)
    kernels[ck, lk]((ctas,), (32 * (cpw + ldw),), (src, np.int64(window), np.int32(cpw), np.int32(ldw),
                                                   np.int32(batches), np.int32(steps), np.int32(active), sink, rec),
                    shared_mem=SMEM)
    cp.cuda.runtime.deviceSynchronize()
    return rec.get().reshape(ctas, 32, 2)


def role_windows(rec, lo: int, hi: int):
    """Per CTA: last end minus first start over warps [lo, hi)."""
    r = rec[:, lo:hi, :]
    return r[:, :, 1].max(axis=1) - r[:, :, 0].min(axis=1)


def measure(cp, np, f, src, sink, sms: int, case, active: int) -> dict:
    _name, _ctas, _ck, _lk, _window, cpw, ldw, batches, steps = case
    cp_bytes = cpw * batches * 4096
    ld_wavefronts = ldw * steps * 4 * 4
    runs = []
    for i in range(7):
        rec = launch(cp, np, f, src, sink, sms, case, active)
        if i < 2:
            continue
        run = {}
        if active & 1:
            w = role_windows(rec, 0, cpw)
            run["cp_cycles"] = float(np.median(w))
            run["cp_bytes_per_cycle"] = float(np.median(cp_bytes / w))
        if active & 2:
            w = role_windows(rec, cpw, cpw + ldw)
            run["ld_cycles"] = float(np.median(w))
            run["ld_wavefronts_per_cycle"] = float(np.median(ld_wavefronts / w))
        runs.append(run)
    out = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    return out | {"runs": runs}


def overlap(row: dict, cp_bytes: float, ld_wavefronts: float) -> dict:
    """The two roles' rates while both run: the one that ends last is taken to run at its alone rate after the other
    ends (both start together), so its work in the overlap is its total less that tail."""
    both, c_alone, l_alone = row["both"], row["cp"]["cp_bytes_per_cycle"], row["ld"]["ld_wavefronts_per_cycle"]
    tc, tl = both["cp_cycles"], both["ld_cycles"]
    t = min(tc, tl)
    cp_in = cp_bytes - max(0.0, tc - tl) * c_alone
    ld_in = ld_wavefronts - max(0.0, tl - tc) * l_alone
    return {"overlap_cycles": t, "overlap_cp_bytes_per_cycle": cp_in / t, "overlap_ld_wavefronts_per_cycle": ld_in / t}


def child(case: int) -> None:
    import cupy as cp
    import numpy as np

    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    f = setup(cp)
    src = cp.ones(sms * 256 * KIB // 4, dtype=cp.float32)
    sink = cp.zeros(1024, dtype=cp.uint32)
    launch(cp, np, f, src, sink, sms, CASES[case], 3)


def main() -> int:
    got = common.child_or_main(__doc__.splitlines()[0], "ldsm_cpasync", child)
    if got is None:
        return 0
    a, cp, np, res, sms, ncu = got
    f = setup(cp)
    src = cp.ones(sms * 256 * KIB // 4, dtype=cp.float32)
    sink = cp.zeros(1024, dtype=cp.uint32)
    float(src.sum())
    for ci, case in enumerate(CASES):
        name, ctas, ck, lk, window, cpw, ldw, batches, steps = case
        row = {"case": name, "ctas": ctas or sms, "copy": KIND_NAMES[0][ck], "reader": KIND_NAMES[1][lk],
               "window_bytes": window, "cp_warps": cpw, "ld_warps": ldw, "cp_batches": batches, "ld_steps": steps}
        for mode, active in MODES:
            row[mode] = measure(cp, np, f, src, sink, sms, case, active)
        row |= overlap(row, cpw * batches * 4096, ldw * steps * 16)
        common.profile_child(ncu, NCU_METRICS, "^ldsm_cpasync_", __file__, ci, [], row)
        res["results"]["ldsm_cpasync"]["rows"].append(row)
        common.log(f"{name}: copy alone {row['cp']['cp_bytes_per_cycle']:.1f} B/clk, reader alone "
                   f"{row['ld']['ld_wavefronts_per_cycle']:.3f} wf/clk; together over {row['overlap_cycles']:.0f} "
                   f"cycles: copy {row['overlap_cp_bytes_per_cycle']:.1f} B/clk, reader "
                   f"{row['overlap_ld_wavefronts_per_cycle']:.3f} wf/clk; ncu {row.get('ncu', {})}")
        common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
