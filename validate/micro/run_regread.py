"""What an FFMA costs the issue when it reads three registers instead of two (ncu's dispatch_stall).

    python3 validate/micro/run_regread.py --out validate/measurements/h100/regread-2026-11-25.json

validate/micro/regread.cu: one CTA per SM of 128, 256 or 512 threads (1, 2 or 4 warps per SMSP) loops over a body of
1024 FFMAs in 8 independent chains, their sources three registers (READS=3: the SASS sets no operand reuse) or two
registers and an immediate (READS=2). clock64 per CTA, the median over the SMs: cycles per FFMA per SMSP (1.0 is
the FP32 pipe's rate). ncu's PC samples put dispatch_stall on the FFMA with three register sources of the FP32 rungs
(validate/measurements/h100/stallsamples-2026-11-25.json).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

BODY = 1024


def main() -> int:
    a, cp, np, res, sms = common.micro_start(__doc__.splitlines()[0])
    src = (HERE / "regread.cu").read_text()
    sink = cp.zeros(4, dtype=cp.float32)
    rows = []
    for reads in (2, 3):
        k = cp.RawModule(code=src, options=("-std=c++17", "-arch=sm_90a", f"-DREADS={reads}", f"-DBODY={BODY}")) \
            .get_function("rr_body")
        for threads in (128, 256, 512):
            iters = 2048
            common.sm_cycles(cp, k, sms, threads, np.int32(4), np.float32(1.0), sink)  # warm-up
            cyc = float(np.median(common.sm_cycles(cp, k, sms, threads, np.int32(iters), np.float32(1.0), sink)))
            w = threads // 128
            cpi = cyc / (iters * BODY * w)
            rows.append({"register_reads": reads, "warps_per_smsp": w, "cycles_per_ffma_per_smsp": cpi})
            common.log(f"{reads} register reads, {w} warps per SMSP: {cpi:.3f} cycles per FFMA per SMSP")
    res["results"]["regread"] = {"rows": rows, "unit": "cycles per FFMA per SMSP (the FP32 pipe: 1.0)"}
    common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
