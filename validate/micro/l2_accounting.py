"""Two small measurements the H100 config needs (run on the GPU; writes JSON):

1. empty-kernel duration: ncu gpu__time_duration.sum of an empty kernel (1 and 132 blocks) and the CUDA-event
   time of back-to-back launches -> chip.kernel_overhead_ns.
2. how ncu's L2 counters account hits and misses: every SM reads (a) a 64 MiB buffer once (pure streaming, all
   misses), (b) an 8 MiB buffer 8 times (resident after the first pass), (c) a 64 MiB buffer with each 16 MiB
   quarter read by all SMs at once (shared streaming): lts__t_sectors_op_read, lookup hits/misses,
   lts__t_sector_hit_rate.pct and dram__bytes_read.sum.

    python3 validate/micro/l2_accounting.py --out OUT.json            # runs itself under ncu
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import subprocess
import sys

SRC = r"""
extern "C" __global__ void empty_kernel() {}
extern "C" __global__ void read_passes(const float4* __restrict__ a, long long n4, int passes, float* out) {
  float acc = 0.f;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (int p = 0; p < passes; ++p)
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
      float4 v = a[i]; acc += v.x + v.y + v.z + v.w;
    }
  if (acc == 12345.f) out[0] = acc;
}
"""
METRICS = ["gpu__time_duration.sum", "lts__t_sectors_op_read.sum", "lts__t_sectors_op_read_lookup_hit.sum",
           "lts__t_sectors_op_read_lookup_miss.sum", "lts__t_sector_hit_rate.pct", "lts__t_sector_op_read_hit_rate.pct",
           "dram__bytes_read.sum", "lts__t_requests_op_read.sum"]
CASES = {"empty_1": (1, 0, 0), "empty_132": (132, 0, 0), "stream_64MiB_x1": (528, 64, 1),
         "resident_8MiB_x8": (528, 8, 8), "resident_16MiB_x4": (528, 16, 4), "resident_32MiB_x2": (528, 32, 2)}


def run_cases() -> None:
    import cupy as cp

    mod = cp.RawModule(code=SRC)
    empty = mod.get_function("empty_kernel")
    rp = mod.get_function("read_passes")
    out = cp.zeros(1, cp.float32)
    for blocks, mib, passes in CASES.values():
        if mib == 0:
            empty((blocks,), (32,), ())
        else:
            n4 = mib * (1 << 20) // 16
            a = cp.random.rand(n4 * 4, dtype=cp.float32)
            cp.cuda.runtime.deviceSynchronize()
            rp((blocks,), (256,), (a, cp.int64(n4), cp.int32(passes), out))
        cp.cuda.runtime.deviceSynchronize()
    # CUDA-event time of back-to-back empty launches
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(10):
        empty((132,), (32,), ())
    start.record()
    for _ in range(1000):
        empty((132,), (32,), ())
    stop.record()
    stop.synchronize()
    print("EVENT_EMPTY_US", cp.cuda.get_elapsed_time(start, stop) / 1000 * 1e3)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--child", action="store_true")
    a = ap.parse_args()
    if a.child:
        run_cases()
        return
    ncu = os.environ.get("NCU", "ncu")
    cmd = [ncu, "--clock-control", "none", "--csv", "--page", "raw", "--print-units", "base",
           "--metrics", ",".join(METRICS), "-k", "regex:empty_kernel|read_passes", "-c", str(len(CASES)),
           sys.executable, __file__, "--child", "--out", a.out]
    r = subprocess.run(cmd, capture_output=True, text=True)
    lines = r.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    rows = list(csv.DictReader(io.StringIO("\n".join(lines[start:]))))[1:]  # skip the units row
    result = {"method": __doc__, "ncu": {}, "stderr_tail": r.stderr[-2000:]}
    for name, row in zip(CASES, rows, strict=False):
        result["ncu"][name] = {m: row.get(m) for m in METRICS}
    event = [line for line in lines if line.startswith("EVENT_EMPTY_US")]
    result["event_us_per_empty_launch_back_to_back"] = float(event[0].split()[1]) if event else None
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)
    print(json.dumps(result["ncu"], indent=1))
    print("event us per empty launch:", result["event_us_per_empty_launch_back_to_back"])


if __name__ == "__main__":
    main()
