"""Cost of a 2D TMA tensor store (cp.async.bulk.tensor.2d.global.shared::cta.bulk_group) on the H100 against the box
size, one SM alone and every SM: what gpusim's `tma_st` operation is timed with (today the TMA loads' numbers,
``[tma]``: a store's own not yet measured).

    python3 validate/micro/run_tma_store.py --out validate/measurements/h100/tmastore-DATE.json

Kernel: validate/micro/tma_store.cu (header comment). Boxes of 128-B rows (64 bf16, 128B swizzle) x 16, 64 or 256
rows (2, 8, 32 KiB); PENDING 0 (each store waits for its box to be read: latency) or 7 (eight in flight:
throughput); a tensor of 8 MiB (its writes stay in the L2) or 1 GiB (written back to HBM). n = 256 stores per CTA,
one warm-up launch and 3 timed ones; per launch the median over CTAs, then the median over launches.
Reported: cycles per store to its read (clock64, first store to the last wait_group.read 0, / n), to the writes'
completion, issue cycles per store, and chip bytes per ns (every CTA's boxes over the %globaltimer span).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import common  # noqa: E402

SRC = HERE / "tma_store.cu"
KDIR = HERE.parent / "kernels"
REC, N, REPS = 8, 256, 3
ROWS = (16, 64, 256)
PENDING = (0, 7)
TENSORS = {"l2": 4096, "hbm": 1 << 19}  # rows of 1024 bf16 (2 KiB): 8 MiB, 1 GiB
SMEM = 120 * 1024  # one CTA per SM


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import cupy as cp
    import numpy as np
    import tma

    res = common.cupy_header(cp, "micro-1") | {"results": {"rows": []}}
    mods = {p: cp.RawModule(code=SRC.read_text(), options=("-std=c++17", "-arch=sm_90a", f"-I{KDIR}",
                                                          f"-DPENDING={p}")) for p in PENDING}
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    for src, rows_t in TENSORS.items():
        tensor = cp.zeros((rows_t, 1024), dtype=cp.uint16)
        for box_rows in ROWS:
            m = tma.encode_2d(int(tensor.data.ptr), rows=rows_t, cols=1024, elem_bytes=2, box_rows=box_rows,
                              box_cols=64, swizzle=128, dtype="bfloat16")
            marg = tma.kernel_arg(m)
            nbands = rows_t // box_rows
            for pending in PENDING:
                f = mods[pending].get_function("tma_store")
                f.max_dynamic_shared_size_bytes = SMEM
                for grid in (1, sms):
                    rec = cp.zeros(grid * REC, dtype=cp.int64)
                    per = []
                    for rep in range(REPS + 1):
                        f((grid,), (128,), (marg, np.int32(N), np.int32(box_rows), np.int32(nbands), rec),
                          shared_mem=SMEM)
                        cp.cuda.Device().synchronize()
                        if rep == 0:
                            continue
                        r = cp.asnumpy(rec).reshape(grid, REC).astype(np.float64)
                        per.append({"read_cycles_per_store": float(np.median((r[:, 1] - r[:, 0]) / N)),
                                    "done_cycles_per_store": float(np.median((r[:, 2] - r[:, 0]) / N)),
                                    "final_write_cycles": float(np.median(r[:, 2] - r[:, 1])),
                                    "issue_cycles_per_store": float(np.median(r[:, 6] / N)),
                                    "chip_bytes_per_ns": grid * N * box_rows * 128 / float(r[:, 4].max()
                                                                                            - r[:, 3].min())})
                    row = {"tensor": src, "box_rows": box_rows, "box_bytes": box_rows * 128, "pending": pending,
                           "grid": grid} | {k: statistics.median(p[k] for p in per) for k in per[0]}
                    common.log(str(row))
                    res["results"]["rows"].append(row)
    common.write_json(Path(a.out), res)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
