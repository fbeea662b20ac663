"""Does the L1 allocate what a global load brings in by the 32-B sector or by the 128-B line? (the model's L1 is an LRU
of sectors: gpusim/memory/l1.py; spmv_csr's banded rows, whose lanes touch one sector of each of 16 lines a request,
hit 87% in the model and 82% on the H100)

    python3 validate/micro/run_l1_lines.py --out validate/measurements/h100/l1lines-<date>.json

validate/micro/l1_lines.cu, compiled per SECTORS (1: a request reads one sector of each of 32 lines; 4: whole lines):
one CTA of 1024 threads an SM walks its own window of 128-B lines 8 times. Rows: the window in KiB of lines, beside
the dynamic shared memory of the launch (0 or 100 KiB: a smaller L1). ncu (one child process launching every case,
caches flushed between kernels, --clock-control none): the L1 sector hit rate, sectors, L2 read sectors and the
carveout the driver configured. Ideal hit rate 7/8 (87.5%) while the window fits.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

WINDOWS_KIB = (32, 64, 128, 160, 192, 224, 256, 320, 384, 512, 1024)
CASES = [(s, kib, 0) for s in (1, 4) for kib in WINDOWS_KIB] + [(1, kib, 100 << 10) for kib in (32, 64, 96, 128, 256)]
PASSES = 8
METRICS = ["l1tex__t_sector_hit_rate.pct", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
           "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
           "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
           "lts__t_sectors_op_read.sum", "launch__shared_mem_config_size", "gpu__time_duration.sum"]


def _fns(cp):
    code = (HERE / "l1_lines.cu").read_text()
    return {s: cp.RawModule(code=code, options=(f"-DSECTORS={s}",)).get_function("l1_lines") for s in (1, 4)}


def _launch_all(cp, np, sms, timed=True):
    fns = _fns(cp)
    for f in fns.values():
        f.max_dynamic_shared_size_bytes = 100 << 10
    data = cp.ones(sms * (max(WINDOWS_KIB) << 10) // 4, dtype=cp.float32)
    sink = cp.zeros(sms * 1024, dtype=cp.float32)
    times = []
    for s, kib, smem in CASES:
        lines = (kib << 10) // 128
        args = (data, np.int32(lines), np.int32(PASSES), np.int32(0), sink)
        def launch(f=fns[s], args=args, smem=smem):
            f((sms,), (1024,), args, shared_mem=smem)
        times.append(common.event_times_ns(cp, launch, n=5) if timed else launch())
    cp.cuda.runtime.deviceSynchronize()
    return times


def child(case: int) -> None:
    import cupy as cp
    import numpy as np

    _launch_all(cp, np, cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"], timed=False)


def main() -> int:
    got = common.child_or_main(__doc__, "l1_lines", child)
    if got is None:
        return 0
    a, cp, np, res, sms, ncu = got
    times = _launch_all(cp, np, sms)
    rows = res["results"]["l1_lines"]["rows"]
    for (s, kib, smem), ts in zip(CASES, times, strict=True):
        rows.append({"sectors_per_line": s, "window_kib_of_lines": kib, "dynamic_smem_bytes": smem,
                     "passes": PASSES, "ctas": sms, "threads": 1024, "time_ns": common.summarize(ts)})
    if ncu:
        import tempfile

        rep = Path(tempfile.mkdtemp(prefix="ncu_l1lines_")) / "l1lines"
        got_rows, _u, _t, dropped, logtxt = common.run_ncu(ncu, METRICS, "^l1_lines$",
                                                           [*common.python_cmd(), __file__, "--child", "0"], rep, 500)
        got_rows = sorted(got_rows, key=lambda r: int(r.get("ID", 0) or 0))  # the child launches each case once
        for i, row in enumerate(rows):
            row["ncu"] = common.metric_values(got_rows[i] if i < len(got_rows) else None, METRICS)
        res["results"]["l1_lines"]["ncu_dropped"] = dropped
        if not got_rows:
            res["results"]["l1_lines"]["ncu_log_tail"] = logtxt[-3000:]
    for r in rows:
        n = r.get("ncu", {})
        common.log(f"sectors/line {r['sectors_per_line']} window {r['window_kib_of_lines']} KiB smem "
                   f"{r['dynamic_smem_bytes']}: L1 hit {n.get('l1tex__t_sector_hit_rate.pct')}%, carveout "
                   f"{n.get('launch__shared_mem_config_size')}, {r['time_ns']['median'] / 1e3:.1f} us")
    res["results"]["l1_lines"]["how"] = __doc__
    common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
