"""SMs that copy the same bytes from L2 at the same time: L2 sector lookups and the rate, against different bytes.

    python3 validate/micro/run_l2_merge.py --out validate/measurements/h100/l2merge-2026-11-26.json [--skip-ncu]
    python3 validate/micro/run_l2_merge.py --lsu --out validate/measurements/h100/l2merge-lsu-2026-11-26.json
    python3 validate/micro/run_l2_merge.py --offsets --out validate/measurements/h100/l2merge-offset-2026-11-26.json

validate/micro/l2_merge.cu: one CTA per SM keeps `stages` 1D bulk copies (TMA, cp.async.bulk) of `copy` bytes in
flight, `rounds` copies in all, from a 16 MiB L2-resident buffer. CTAs form groups whose members copy the same chunk
at about the same time (neighbours in launch order, or members spread over the grid); different groups copy
different chunks. Group 1 is every SM on its own bytes. Per case: 2 warm-up launches and 3 recorded (medians of the
window rate, bytes copied over first start to last end of %globaltimer, and of the SM clock); with ncu one child
launch per case for the L2's sector lookups (`lts__t_sectors_op_read.sum`) against the bytes the copies moved.
`--offsets`: neighbour pairs of 64-KiB copies whose odd member starts 0 to 20 us late, to say how close in time two
requests must come to be coalesced.
`--lsu`: the same groups with loads instead (validate/micro/l2_clock.cu: 16 warps per SM streaming float4 with
ld.global.cg, a stream that the L2's bandwidth bounds), to say whether the lookups a group shares also save the
L2's bandwidth. The Hopper GEMMs' twins show fewer L2 sector lookups than their TMA bytes (0.79-0.97 of them)
where gpusim books one per sector; this says when.
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
REGION = 16 * MIB
# (group, spread, stages, copy bytes, rounds[, odd CTAs' start delay in ns])
CASES = [(1, 0, 4, 16384, 20000), (2, 0, 4, 16384, 20000), (2, 1, 4, 16384, 20000), (4, 0, 4, 16384, 20000),
         (4, 1, 4, 16384, 20000), (12, 0, 4, 16384, 20000), (12, 1, 4, 16384, 20000), (132, 0, 4, 16384, 20000),
         (1, 0, 2, 16384, 20000), (2, 0, 2, 16384, 20000), (2, 1, 2, 16384, 20000),
         # more bytes in flight per SM: is the copies' rate the SM's or the L2's?
         (1, 0, 8, 16384, 20000), (2, 0, 8, 16384, 20000), (1, 0, 2, 65536, 5000), (2, 0, 2, 65536, 5000)]
OFFSET_CASES = [(2, 0, 2, 65536, 5000, d) for d in (0, 50, 100, 200, 400, 800, 1600, 5000, 20000)]
# --lsu: (group, spread); 16 loader warps, 10000 batches of 32 float4 loads per lane
LSU_CASES = [(1, 0), (2, 0), (2, 1), (4, 0), (12, 0), (12, 1), (132, 0)]
LSU_LOADERS, LSU_BATCHES = 16, 10000
NCU_METRICS = ["gpu__time_duration.sum", "lts__t_sectors_op_read.sum", "lts__t_requests_op_read.sum",
               "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sector_op_read_hit_rate.pct",
               "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum", "l1tex__m_xbar2l1tex_read_bytes.sum",
               "lts__t_sectors_srcunit_ltcfabric_op_read.sum", "lts__t_sectors.avg.pct_of_peak_sustained_elapsed",
               "dram__bytes_read.sum", "sm__cycles_elapsed.avg.per_second"]


def setup(cp):
    mod = cp.RawModule(code=(HERE / "l2_merge.cu").read_text(), options=("-std=c++17", "-arch=sm_90a"))
    f = mod.get_function("l2_merge")
    f.max_dynamic_shared_size_bytes = 8 * 16384
    src = cp.ones(REGION // 4, dtype=cp.float32)
    return f, src


def launch(cp, np, f, src, sms: int, case):
    group, spread, stages, copy, rounds, *rest = case
    delay = rest[0] if rest else 0
    rec = cp.zeros(sms * 4, dtype=cp.int64)
    f((sms,), (32,), (src, np.uint64(REGION), np.int32(group), np.int32(spread), np.int32(stages), np.uint32(copy),
                      np.int64(rounds), rec, np.int64(delay)), shared_mem=stages * copy)
    cp.cuda.runtime.deviceSynchronize()
    return rec.get().reshape(-1, 4)


def child(case: int, lsu: bool, offsets: bool = False) -> None:
    import cupy as cp
    import numpy as np

    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    if lsu:
        import run_l2_clock

        f, stream, sink = run_l2_clock.setup(cp, np, "l2")
        float(stream.sum())
        group, spread = LSU_CASES[case]
        run_l2_clock.launch(cp, np, f, stream, sink, sms, LSU_LOADERS, 0, LSU_BATCHES, group, spread)
        return
    f, src = setup(cp)
    float(src.sum())
    launch(cp, np, f, src, sms, (OFFSET_CASES if offsets else CASES)[case])


def run_lsu(cp, np, res, sms: int, out: Path, ncu) -> int:
    import run_l2_clock

    f, stream, sink = run_l2_clock.setup(cp, np, "l2")
    float(stream.sum())
    for ci, (group, spread) in enumerate(LSU_CASES):
        nbytes = sms * LSU_LOADERS * LSU_BATCHES * run_l2_clock.BATCH_BYTES
        row = {"kind": "lsu", "group": group, "spread": spread, "loader_warps": LSU_LOADERS, "batches": LSU_BATCHES,
               "bytes": nbytes}
        row |= common.windowed_runs(partial(run_l2_clock.launch, cp, np, f, stream, sink, sms, LSU_LOADERS, 0,
                                            LSU_BATCHES, group, spread), float(nbytes), 2, 3)
        profile(ncu, row, ci, ["--lsu"])
        res["results"]["l2_merge"]["rows"].append(row)
        common.log(f"lsu group {group} spread {spread}: {row['bytes_per_ns']:.0f} B/ns, SM ns "
                   f"{row['sm_ns_min']:.0f}-{row['sm_ns_max']:.0f}; lookups per sector read "
                   f"{row['lookups_per_sector_copied']}")
        common.write_json(out, res)
    return 0


def profile(ncu, row: dict, ci: int, extra: list[str]) -> None:
    """ncu on one child launch of case ``ci``: the L2's lookups per sector the case moved."""
    common.profile_child(ncu, NCU_METRICS, "^l2_(merge|clock)$", __file__, ci, extra, row)
    lookups = row.get("ncu", {}).get("lts__t_sectors_op_read.sum")
    row["lookups_per_sector_copied"] = lookups * 32 / row["bytes"] if lookups else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=False)
    ap.add_argument("--skip-ncu", action="store_true")
    ap.add_argument("--lsu", action="store_true", help="groups of ld.global.cg streams instead of TMA copies")
    ap.add_argument("--offsets", action="store_true", help="pairs whose odd member starts late")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child is not None:
        child(a.child, a.lsu, a.offsets)
        return 0
    if not a.out:
        ap.error("--out is required")
    cp, np, res, sms = common.micro_results("l2_merge")
    out = Path(a.out)
    ncu = None if a.skip_ncu else common.find_ncu()
    if a.lsu:
        return run_lsu(cp, np, res, sms, out, ncu)
    f, src = setup(cp)
    float(src.sum())  # read once: L2-resident from here on
    cases = OFFSET_CASES if a.offsets else CASES
    for ci, case in enumerate(cases):
        group, spread, stages, copy, rounds, *rest = case
        if sms % group:
            continue
        row = {"group": group, "spread": spread, "stages": stages, "copy_bytes": copy, "rounds": rounds,
               "delay_ns": rest[0] if rest else 0, "bytes": sms * rounds * copy}
        row |= common.windowed_runs(partial(launch, cp, np, f, src, sms, case), float(sms * rounds * copy), 2, 3)
        profile(ncu, row, ci, ["--offsets"] if a.offsets else [])
        res["results"]["l2_merge"]["rows"].append(row)
        common.log(f"group {group} spread {spread} stages {stages} delay {row['delay_ns']}: "
                   f"{row['bytes_per_ns']:.0f} B/ns, SM "
                   f"{row['sm_clock_mhz']:.0f} MHz, SM ns {row['sm_ns_min']:.0f}-{row['sm_ns_max']:.0f}; "
                   f"lookups per sector copied {row['lookups_per_sector_copied']}")
        common.write_json(out, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
