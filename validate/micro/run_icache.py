"""Instruction fetch between 128 and 256 KiB of looped code, at 1, 2, 4 and 8 warps per sub-partition (the
instruction-cache model's step and its sharing between warps; `validate/micro/run_clocks.py` measured the steps).

    python3 validate/micro/run_icache.py --out validate/measurements/h100/icache-2026-11-24.json

validate/micro/icache.cu compiled with BODY = 8192 ... 16384 IMADs (16 B each: 128 ... 256 KiB); one CTA per SM of
128, 256, 512 or 1024 threads runs the body in a loop; clock64 per CTA, median over the SMs; cycles per instruction
per sub-partition.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

BODIES = (4096, 8192, 8704, 9216, 10240, 12288, 16384)


def measure(cp, np, sms: int, bodies, threads_list, ffma: bool = False, stall_every: int = 0,
            stall_global: bool = False) -> list[dict]:
    """Cycles per warp instruction per SMSP for each body (IMADs, or FFMAs with ``ffma``) and CTA size (one CTA per
    SM). ``stall_every``: a dependent shared load (``stall_global``: an L2 hit) after every that many FFMAs (then the
    cycles are per FFMA)."""
    src = (HERE / "icache.cu").read_text()
    rows = []
    for body in bodies:
        opts = ("-std=c++17", "-arch=sm_90a", f"-DBODY={body}") + (("-DFFMA=1",) if ffma else ()) \
            + ((f"-DSTALL_EVERY={stall_every}",) if stall_every else ()) \
            + (("-DSTALL_GLOBAL=1",) if stall_global else ())
        k = cp.RawModule(code=src, options=opts).get_function("ic_body")
        usink = cp.zeros(4, dtype=cp.uint32)
        for threads in threads_list:
            iters = max((1 << 21) // body, 4)
            common.sm_cycles(cp, k, sms, threads, np.int32(2), np.uint32(7), usink)  # warm-up
            cyc = float(np.median(common.sm_cycles(cp, k, sms, threads, np.int32(iters), np.uint32(7), usink)))
            w = threads // 32 // 4
            cpi = cyc / (iters * body * w)
            rows.append({"body_instructions": body, "body_bytes": None if stall_every else body * 16,
                         "warps_per_smsp": w, "instruction": "FFMA" if ffma else "IMAD", "stall_every": stall_every,
                         "stall_global": stall_global,
                         "cycles_per_instruction": cpi})
            common.log(f"icache {'FFMA' if ffma else 'IMAD'} body {body} ({body * 16 >> 10} KiB) warps/smsp {w}: "
                       f"{cpi:.3f}")
    return rows


COLD_BODIES = (64, 256, 1024, 2048)


def _one_pass(cp, np, kernel, sms: int, threads: int, before, usink) -> tuple[float, float]:
    """``before()``, then one pass of ``kernel`` on every SM: (median, max) over the SMs of its loop's cycles."""
    before()
    d = common.sm_cycles(cp, kernel, sms, threads, np.int32(1), np.uint32(7), usink)
    return float(np.median(d)), float(d.max())


def measure_cold(cp, np, sms: int, bodies, threads_list) -> list[dict]:
    """Cycles of one pass over a body of ``body`` IMADs (iters = 1, one CTA per SM), the code cold or warm: ``warm``
    right after the same kernel ran; ``evicted`` after a kernel with a 256 KiB body of other code ran on every SM;
    ``l2_flushed`` after that kernel and a 256 MiB write (the code is in neither the SM nor the L2); ``cold_first``
    the module's first launch. The median and the largest over the SMs of clock64 at the loop's end less its start
    (the code before the loop was fetched before the start)."""
    src = (HERE / "icache.cu").read_text()
    thrash = cp.RawModule(code=src.replace("ic_body", "ic_thrash"),
                          options=("-std=c++17", "-arch=sm_90a", "-DBODY=16384")).get_function("ic_thrash")
    scratch = cp.empty((256 << 20) // 4, dtype=cp.float32)
    usink = cp.zeros(4, dtype=cp.uint32)
    trec = cp.zeros(sms * 2, dtype=cp.int64)
    rows = []
    for body in bodies:
        for threads in threads_list:
            # a fresh module per case: its first launch fetches code no SM has seen
            name = f"ic_cold_{body}_{threads}"
            k = cp.RawModule(code=src.replace("ic_body", name),
                             options=("-std=c++17", "-arch=sm_90a", f"-DBODY={body}")).get_function(name)
            evict = functools.partial(thrash, (sms,), (threads,), (np.int32(1), np.uint32(7), usink, trec))

            def flush(evict=evict):
                evict()
                scratch.fill(1.0)

            out = {"body_instructions": body, "body_bytes": body * 16, "threads": threads,
                   "cold_first": _one_pass(cp, np, k, sms, threads, lambda: None, usink)}
            for case, before in (("warm", lambda: None), ("evicted", evict), ("l2_flushed", flush)):
                vals = [_one_pass(cp, np, k, sms, threads, before, usink) for _ in range(3)]
                out[case] = (float(np.median([v[0] for v in vals])), float(np.median([v[1] for v in vals])))
            rows.append(out)
            common.log(f"cold body {body} threads {threads}: " + ", ".join(
                f"{c} {out[c][0]:.0f}/{out[c][1]:.0f}" for c in ("cold_first", "warm", "evicted", "l2_flushed")))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--bodies", default=",".join(map(str, BODIES)),
                    help="comma-separated body sizes in IMADs (16 B each)")
    ap.add_argument("--threads", default="128,256,512,1024", help="comma-separated CTA sizes")
    ap.add_argument("--cold", action="store_true", help="one pass over cold and warm code instead (measure_cold)")
    ap.add_argument("--ffma", action="store_true", help="a body of FFMAs (one a cycle) instead of IMADs")
    ap.add_argument("--stall-every", type=int, default=0,
                    help="with --ffma: a dependent shared load after every that many FFMAs")
    ap.add_argument("--stall-global", action="store_true", help="with --stall-every: the load is an L2 hit")
    a = ap.parse_args()
    import cupy as cp
    import numpy as np

    res = common.cupy_header(cp, "micro-1") | {"results": {}}
    if a.cold:
        rows = measure_cold(cp, np, res["gpu"]["sm_count"], tuple(int(b) for b in a.bodies.split(",")),
                            tuple(int(t) for t in a.threads.split(",")))
        res["results"]["icache_cold"] = {
            "rows": rows, "unit": "SM cycles of one pass over the body, (median, max) over the SMs; a warm pass costs "
                                  "2.0 cycles per IMAD per SMSP"}
        common.write_json(Path(a.out), res)
        return 0
    rows = measure(cp, np, res["gpu"]["sm_count"], tuple(int(b) for b in a.bodies.split(",")),
                   tuple(int(t) for t in a.threads.split(",")), a.ffma, a.stall_every,
                   a.stall_global)
    res["results"]["icache"] = {"rows": rows, "unit": "cycles per warp instruction per SMSP (IMAD: 2.0 when fed)"}
    common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
