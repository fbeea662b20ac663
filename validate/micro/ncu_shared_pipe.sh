#!/bin/bash
# ncu on kernels with and without shared-memory bank conflicts: the L1TEX data pipe's shared wavefronts in total
# (l1tex__data_pipe_lsu_wavefronts_mem_shared) against its op_ld and op_st counts, and the pipe's share of its peak.
# Does a conflicted access take the data pipe for more cycles than its counted wavefronts? Run on the device machine:
#   bash validate/micro/ncu_shared_pipe.sh "$OUT"
set -u
out=${1:-/tmp/ncu_shared}
mkdir -p "$out/raw"
metrics="gpu__time_duration.sum,sm__cycles_elapsed.avg,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,l1tex__data_bank_reads.sum,l1tex__data_bank_writes.sum"
cat > /tmp/launch_twin.py <<'PY'
import sys, cupy as cp, numpy as np
k, n = sys.argv[1], int(sys.argv[2])
src = open(f"validate/kernels/{k}.cu").read()
f = cp.RawModule(code=src, options=("-std=c++17",)).get_function(k)
if k.startswith("block_scan"):
    x = cp.ones(n, dtype=cp.float32); y = cp.zeros(n, dtype=cp.float32); a = ((n // 1024,), (512,), (x, y))
elif k.startswith("mem_reduce"):
    per = 512 if "add" in k else 256
    x = cp.ones(n, dtype=cp.float32); y = cp.zeros(n // per, dtype=cp.float32); a = ((n // per,), (256,), (x, y))
elif k.startswith("mem_transpose"):
    x = cp.ones(n * n, dtype=cp.float32); y = cp.zeros(n * n, dtype=cp.float32); g = (n + 31) // 32
    a = ((g, g), (32, 8), (x, y, np.int32(n)))
else:  # sgemm_2d_blocktiling n^3
    A = cp.ones(n * n, dtype=cp.float32); B = cp.ones(n * n, dtype=cp.float32); C = cp.zeros(n * n, dtype=cp.float32)
    a = ((n // 128, n // 128), (256,), (np.int32(n), np.int32(n), np.int32(n), np.float32(1), A, B, np.float32(0), C))
for _ in range(2): f(*a)
cp.cuda.Device().synchronize()
PY
for case in "block_scan 4194304" "block_scan_padded 4194304" "mem_reduce_interleaved 4194304" "mem_reduce_sequential 4194304" "mem_transpose_shared 4096" "mem_transpose_padded 4096" "sgemm_2d_blocktiling 2048"; do
  set -- $case
  ncu --clock-control none --launch-skip 1 --launch-count 1 --csv --metrics "$metrics" python3 /tmp/launch_twin.py $1 $2 \
      >"$out/raw/$1_$2.csv" 2>"$out/raw/$1_$2.err"; echo "$1 $2 rc=$?"
done
tar -C "$out" -czf "$out/ncu_shared_pipe.tgz" raw && rm -rf "$out/raw"
