"""The L2's clock against the SM's: an L2 (or HBM) stream with and without tensor work beside it on every SM.

    python3 validate/micro/run_l2_clock.py --out validate/measurements/h100/l2clock-2026-11-26.json [--skip-ncu]
    python3 validate/micro/run_l2_clock.py --hbm-sweep --out validate/measurements/h100/clockhbm-2026-11-26.json

validate/micro/l2_clock.cu runs one CTA per SM: `loaders` warps stream a fixed number of float4 batches with
ld.global.cg from a buffer read once before (16 MiB: L2-resident; 2 GiB: from HBM) while `mma` more warps run
mma.sync until the stream is done. Tensor work lowers the SM clock (RESULTS.md: 1771-1796 MHz with mma.sync on every
SM, 1980 MHz without) and leaves the memory system alone, so the question is answered by the stream's rate:
- the same bytes per second at both SM clocks: the L2 (HBM) runs on a clock of its own, and its bandwidth per SM cycle
  grows as the SM clock falls;
- the same bytes per SM cycle: the bandwidth follows the SM clock.
`--hbm-sweep`: how far the SM clock falls with HBM traffic beside mma.sync: 1 to 16 warps per SM streaming from
HBM, with 16 mma.sync warps and without, each case run twice (the clock under a power limit drifts); no ncu.
Per case: 3 warm-up launches, then 5 recorded; medians of the SM clock (clock64 / %globaltimer of thread 0 per CTA),
the window (first start to last end of %globaltimer) and the stream's bytes over it (B/ns and B per SM cycle). With
ncu (unless --skip-ncu): one child launch per case profiled with --clock-control none for each unit's clock
(`<unit>__cycles_elapsed.avg.per_second`) and the L2's sector rate.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

MIB = 1 << 20
THREADS = 1024
SMEM = 120 * 1024  # dynamic shared memory: one CTA per SM
BATCH_BYTES = 32 * 32 * 16  # one warp's batch: 32 loads of 16 B per lane
# (buffer, loader warps, mma warps, batches per loader warp)
CASES = [("l2", 8, 0, 20000), ("l2", 8, 8, 20000), ("l2", 8, 24, 20000), ("l2", 16, 0, 10000), ("l2", 16, 16, 10000),
         ("hbm", 16, 0, 3000), ("hbm", 16, 16, 3000)]
BUFFER_BYTES = {"l2": 16 * MIB, "hbm": 2048 * MIB}
# (about 100 ms a launch: the power limit acts over milliseconds)
HBM_SWEEP = [("hbm", n, m, b) for n, b in ((1, 50000), (2, 45000), (4, 30000), (8, 18000), (16, 9000))
             for m in (16, 0)] * 2
NCU_METRICS = ["gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second", "gpc__cycles_elapsed.avg.per_second",
               "lts__cycles_elapsed.avg.per_second", "dram__cycles_elapsed.avg.per_second",
               "lts__t_sectors_op_read.sum", "lts__t_sectors.avg.pct_of_peak_sustained_elapsed",
               "lts__t_sectors_op_read.sum.per_second", "dram__bytes_read.sum.per_second",
               "lts__t_sectors.sum.peak_sustained", "lts__cycles_active.avg"]


def setup(cp, np, buf: str):
    mod = cp.RawModule(code=(HERE / "l2_clock.cu").read_text(), options=("-std=c++17", "-arch=sm_90a", f"-I{HERE}"))
    f = mod.get_function("l2_clock")
    f.max_dynamic_shared_size_bytes = SMEM
    stream = cp.ones(BUFFER_BYTES[buf] // 4, dtype=cp.float32)
    sink = cp.zeros(1 << 20, dtype=cp.float32)
    return f, stream, sink


def launch(cp, np, f, stream, sink, sms: int, loaders: int, mma: int, batches: int, group: int = 1, spread: int = 0):
    rec = cp.zeros(sms * 4, dtype=cp.int64)
    n_vec = stream.size // 4
    f((sms,), ((loaders + mma) * 32,), (stream, np.uint32(n_vec), np.int32(loaders), np.int64(batches),
                                        np.uint32(12345), rec, sink, np.int32(group), np.int32(spread)),
      shared_mem=SMEM)
    cp.cuda.runtime.deviceSynchronize()
    return rec.get().reshape(-1, 4)


def child(case: int) -> None:
    """One launch of a case (under ncu), after its buffer was read once."""
    import cupy as cp
    import numpy as np

    buf, loaders, mma, batches = CASES[case]
    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    f, stream, sink = setup(cp, np, buf)
    float(stream.sum())
    launch(cp, np, f, stream, sink, sms, loaders, mma, batches)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=False)
    ap.add_argument("--skip-ncu", action="store_true")
    ap.add_argument("--hbm-sweep", action="store_true", help="HBM streams of 1-16 warps per SM beside mma.sync")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child is not None:
        child(a.child)
        return 0
    if not a.out:
        ap.error("--out is required")
    cp, np, res, sms = common.micro_results("l2_clock")
    out = Path(a.out)
    ncu = None if a.skip_ncu or a.hbm_sweep else common.find_ncu()
    for ci, (buf, loaders, mma, batches) in enumerate(HBM_SWEEP if a.hbm_sweep else CASES):
        f, stream, sink = setup(cp, np, buf)
        float(stream.sum())  # the buffer read once (an L2-resident one stays there)
        row = {"buffer": buf, "buffer_bytes": BUFFER_BYTES[buf], "loader_warps": loaders, "mma_warps": mma,
               "batches": batches}
        row |= common.windowed_runs(partial(launch, cp, np, f, stream, sink, sms, loaders, mma, batches),
                                    float(sms * loaders * batches * BATCH_BYTES), 3, 5)
        del stream
        cp.get_default_memory_pool().free_all_blocks()
        common.profile_child(ncu, NCU_METRICS, "^l2_clock$", __file__, ci, [], row)
        res["results"]["l2_clock"]["rows"].append(row)
        n = row.get("ncu", {})
        clocks = " ".join(f"{u} {n.get(f'{u}__cycles_elapsed.avg.per_second')}" for u in ("lts", "sm", "dram"))
        common.log(f"{buf} loaders {loaders} mma {mma}: SM {row['sm_clock_mhz']:.0f} MHz, "
                   f"{row['bytes_per_ns']:.0f} B/ns (SMs alone {row['sum_of_sm_bytes_per_ns']:.0f}; SM ns "
                   f"{row['sm_ns_min']:.0f}-{row['sm_ns_max']:.0f}), {row['bytes_per_sm_cycle']:.0f} B/SM-clk; "
                   f"ncu {clocks} "
                   f"lts% {n.get('lts__t_sectors.avg.pct_of_peak_sustained_elapsed')}")
        common.write_json(out, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
