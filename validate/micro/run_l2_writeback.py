"""When the L2 writes dirty lines back to HBM during a kernel (issue "memory system at chip scale": write-back;
``[l2] writeback_*``).

    python3 validate/micro/run_l2_writeback.py --out validate/measurements/h100/l2writeback-2026-11-25.json
    python3 validate/micro/run_l2_writeback.py --partial --out validate/measurements/h100/l2partial-2026-11-26.json

The kernels of validate/micro/l2_writes.cu, one float per thread, every float of the buffer once: ``l2w_store``
(stride 1) writes a buffer of W MiB and reads nothing; ``l2w_copy`` reads W MiB and writes W MiB (the STREAM copy's
pattern); ``l2w_mix`` writes 48 MiB, each warp's stored line followed by 1, 2 or 4 lines read, new ones (misses)
or from a 4 MiB region read again and again (hits). One launch per case under ncu (--clock-control none; caches
flushed and invalidated before every pass, so every case starts from a clean L2): DRAM bytes written and read, L2
write sectors, the L2 hit rate. What reaches DRAM during the kernel, against what the L2 allocated after each
store, is what the model's write-back follows (``[l2] writeback_*``, ``dirty_max_size_ratio``).

``--partial``: ``l2w_partial``, a reduction's pattern (each CTA reads its slice of a stream and stores a partial
sum): partial sums of 4 bytes, eight CTAs to a sector or one per sector, whole sectors or none, with streams of 0
to 256 MiB, some after an unprofiled 64 MiB fill or 256 MiB read; what reaches DRAM.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

STORE_MIB = (8, 16, 20, 24, 28, 32, 40, 48, 56, 64, 96)
COPY_MIB = (4, 8, 10, 12, 14, 16, 18, 20, 24, 28, 32, 48)
MIX_MIB = 48  # l2w_mix: stores of 48 MiB, each warp's line followed by `ratio` lines read
MIX = ((1, 0), (2, 0), (4, 0), (1, 4), (4, 4))  # (ratio, region: 0 = all new lines, else its MiB: re-read, hits)
PLAN = ([("l2w_store", mib, 0, 0) for mib in STORE_MIB] + [("l2w_copy", mib, 0, 0) for mib in COPY_MIB]
        + [("l2w_mix", MIX_MIB, r, reg) for r, reg in MIX])
# --partial: (CTAs, floats read per thread, floats stored per CTA, pitch in floats between CTAs' stores, what runs
# before it unprofiled: "" nothing, "write64" a 64 MiB fill of a scratch buffer, "read256" a 256 MiB sum)
PARTIAL = ((262144, 0, 1, 1, ""), (262144, 1, 1, 1, ""), (65536, 1, 1, 1, ""), (65536, 4, 1, 1, ""),
           (16384, 16, 1, 1, ""), (262144, 1, 1, 8, ""), (262144, 1, 8, 8, ""), (32768, 1, 1, 1, ""),
           (262144, 1, 0, 1, ""), (262144, 1, 0, 1, "write64"), (262144, 1, 0, 1, "read256"),
           (262144, 1, 1, 1, "write64"), (262144, 1, 1, 1, "read256"))
METRICS = ["dram__bytes_write.sum", "dram__bytes_read.sum", "lts__t_sectors_op_write.sum",
           "lts__t_sector_hit_rate.pct", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "gpu__time_duration.sum"]


def child_partial() -> None:
    import cupy as cp
    import numpy as np

    f = cp.RawModule(code=(HERE / "l2_writes.cu").read_text(), options=("-std=c++17",)).get_function("l2w_partial")
    src = cp.ones(max(c * 256 * max(per, 1) for c, per, *_ in PARTIAL), dtype=cp.float32)
    out = cp.zeros(max(c * pitch for c, _, _, pitch, _ in PARTIAL), dtype=cp.float32)
    scratch = cp.zeros((64 << 20) // 4, dtype=cp.float32)
    for ctas, per, width, pitch, before in PARTIAL:
        if before == "write64":
            scratch.fill(2.0)
        elif before == "read256":
            float(src[: (256 << 20) // 4].sum())
        cp.cuda.runtime.deviceSynchronize()
        f((ctas,), (256,), (src, out, np.int32(per), np.int32(width), np.int32(pitch)))
        cp.cuda.runtime.deviceSynchronize()


def partial(out_path: Path) -> int:
    import cupy as cp

    res = common.cupy_header(cp, "micro-1") | {"results": {}}
    rows, _, _, dropped, log = common.run_ncu(common.find_ncu(), METRICS, "l2w_partial",
                                              [*common.python_cmd(), __file__, "--child", "--partial"],
                                              out_path.parent / "l2partial", timeout=300)
    out = []
    for (ctas, per, width, pitch, before), row in zip(PARTIAL, common.assign_rows(rows, ["l2w_partial"] * len(PARTIAL)),
                                                      strict=True):
        vals = common.metric_values(row, METRICS)
        stored = ctas * width * 4
        sectors = 0 if not width else -(-ctas * pitch * 4 // 32) if pitch * 4 < 32 else ctas * -(-width * 4 // 32)
        wr = vals.get("dram__bytes_write.sum")
        out.append({"ctas": ctas, "floats_read_per_thread": per, "stream_bytes": ctas * 256 * per * 4,
                    "floats_stored_per_cta": width, "pitch_floats": pitch, "before": before, "stored_bytes": stored,
                    "sectors_stored": sectors, **vals,
                    "written_per_sector": wr / (sectors * 32) if isinstance(wr, (int, float)) and sectors else None})
        common.log(f"ctas {ctas:6d} per {per:2d} width {width} pitch {pitch} before {before or '-'}: "
                    f"stream {ctas * 256 * per * 4 >> 20} MiB, "
                   f"stored {stored} B in {sectors} sectors, DRAM write {wr} ({out[-1]['written_per_sector']} "
                   f"sector-bytes per sector)")
    res["results"]["l2_partial"] = {"rows": out, "ncu_missing": dropped}
    common.write_json(out_path, res)
    (out_path.parent / "l2partial-ncu-log.txt").write_text(log[-20000:])
    return 0


def child() -> None:
    import cupy as cp
    import numpy as np

    mod = cp.RawModule(code=(HERE / "l2_writes.cu").read_text(), options=("-std=c++17",))
    store, copy = mod.get_function("l2w_store"), mod.get_function("l2w_copy")
    mix = mod.get_function("l2w_mix")
    big = max(max(STORE_MIB), max(COPY_MIB), MIX_MIB)
    out = cp.zeros((big << 20) // 4, dtype=cp.float32)
    src = cp.ones((max(max(COPY_MIB), MIX_MIB * max(r for r, _ in MIX)) << 20) // 4, dtype=cp.float32)
    sink = cp.zeros(1, dtype=cp.float32)
    for kernel, mib, ratio, region in PLAN:
        n = (mib << 20) // 4
        if kernel == "l2w_store":
            store((n // 256,), (256,), (out, np.int64(n), np.int32(1)))
        elif kernel == "l2w_copy":
            copy((n // 256,), (256,), (src, out, np.int64(n)))
        else:
            in_n = (region << 20) // 4 if region else src.size
            mix((n // 256,), (256,), (out, src, np.int64(n), np.int64(in_n), np.int32(ratio), sink))
        cp.cuda.runtime.deviceSynchronize()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--dry", action="store_true", help="print the plan only")
    ap.add_argument("--partial", action="store_true", help="a reduction's partial sums (l2w_partial)")
    a = ap.parse_args()
    if a.partial:
        if a.child:
            child_partial()
            return 0
        return partial(Path(a.out))
    if a.dry:
        for p in PLAN:
            print(*p)
        return 0
    if a.child:
        child()
        return 0
    import cupy as cp

    res = common.cupy_header(cp, "micro-1") | {"results": {}}
    ncu = common.find_ncu()
    rows, _, _, dropped, log = common.run_ncu(ncu, METRICS, "l2w_", [*common.python_cmd(), __file__, "--child"],
                                              Path(a.out).parent / "l2writeback", timeout=500)
    out = []
    for (kernel, mib, ratio, region), row in zip(PLAN, common.assign_rows(rows, [p[0] for p in PLAN]), strict=True):
        vals = common.metric_values(row, METRICS)
        stored = mib << 20
        wr = vals.get("dram__bytes_write.sum")
        out.append({"kernel": kernel, "buffer_mib": mib, "stored_bytes": stored, "read_lines_per_line_stored": ratio,
                    "read_region_mib": region, **vals,
                    "written_back_share": wr / stored if isinstance(wr, (int, float)) else None})
        common.log(f"{kernel} {mib:3d} MiB ratio {ratio} region {region}: DRAM write {wr} "
                   f"({out[-1]['written_back_share']}), read {vals.get('dram__bytes_read.sum')}, "
                   f"L2 hit {vals.get('lts__t_sector_hit_rate.pct')}")
    res["results"]["l2_writeback"] = {"rows": out, "ncu_missing": dropped}
    common.write_json(Path(a.out), res)
    (Path(a.out).parent / "l2writeback-ncu-log.txt").write_text(log[-20000:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
