"""The L2 request coalescer in the twins: pull its ncu metrics out of run_tc_sm90.py's or run_h100.py's files.

    python3 validate/run_tc_sm90.py --kernels hgemm_persistent --out $OUT/tc-persistent.json
    python3 validate/run_tc_sm90.py --kernels hgemm_ws --shapes 4096,4096,4096 --out $OUT/tc-ws.json
    python3 validate/micro/tc_lrc_extract.py $OUT/lrcgemm-2026-11-26.json $OUT/tc-persistent.json $OUT/tc-ws.json
    python3 validate/run_h100.py --kernels sgemm_2d_blocktiling,... --shapes 4096,4096,4096 --out $OUT/fp32.json
    python3 validate/micro/tc_lrc_extract.py $OUT/lrcfp32-2026-11-26.json $OUT/fp32.json

Writes a micro-1 file (not a kernels file, so `gpusim validate` does not take these rows twice): per case the
kernel, shape, knobs, time and the `lrc__*`, `lts__t_sectors_op_read` and TMA-byte metrics.
"""

from __future__ import annotations

import json
import sys


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    out = {"schema": "micro-1",
           "source": "validate/run_tc_sm90.py (ncu), extracted by validate/micro/tc_lrc_extract.py",
           "results": {"lrc_gemm": {"rows": []}}}
    for path in sys.argv[2:]:
        d = json.load(open(path))
        out.setdefault("date", d.get("date"))
        out.setdefault("gpu", d.get("gpu"))
        for k in d["kernels"]:
            n = k.get("ncu") or {}
            row = {"kernel": k["kernel"], "shape": k["shape"], "knobs": k.get("knobs"), "time_ns": k.get("time_ns")}
            row |= {m: v for m, v in n.items()
                    if m.startswith(("lrc__", "lts__t_sectors_op_read", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld"))
                    or "tma_ld" in m}
            out["results"]["lrc_gemm"]["rows"].append(row)
            print(json.dumps(row))
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
