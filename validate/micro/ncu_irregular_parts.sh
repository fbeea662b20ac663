#!/bin/bash
# ncu on the irregular twins' parts (validate/micro/run_irregular_parts.py --launch): where the scan's and the
# stencil's time goes, by unit throughput, shared wavefronts and stall reasons. Run on the device machine:
#   bash validate/micro/ncu_irregular_parts.sh "$OUT"
set -u
out=${1:-/tmp/ncu_parts}
mkdir -p "$out/raw"
metrics="gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,breakdown:gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,breakdown:sm__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed.sum,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_short_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_mio_throttle.ratio,smsp__average_warp_latency_issue_stalled_lg_throttle.ratio,smsp__average_warp_latency_issue_stalled_wait.ratio,smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio,smsp__average_warp_latency_issue_stalled_not_selected.ratio,smsp__average_warp_latency_issue_stalled_selected.ratio,smsp__average_warp_latency_issue_stalled_dispatch_stall.ratio,smsp__average_warp_latency_issue_stalled_no_instruction.ratio,smsp__average_warp_latency_issue_stalled_membar.ratio,smsp__average_warp_latency_issue_stalled_drain.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,sm__cycles_elapsed.avg,smsp__cycles_active.avg"
run() {  # name, args...
  local name=$1; shift
  ncu --clock-control none --launch-skip 1 --launch-count 1 --csv --metrics "$metrics" \
      python3 validate/micro/run_irregular_parts.py --launch "$@" >"$out/raw/$name.csv" 2>"$out/raw/$name.err"
  echo "$name rc=$?"
}
for f in 1,1,1,0 1,1,1,1 0,0,1,0 1,0,1,0 0,1,1,0 1,1,0,0; do run "scan_${f//,/_}" scan "$f"; done
for f in 1,1 0,0 1,0 0,1; do run "stencil_${f//,/_}_8192" stencil "$f" 8192; done
run stencil_1_1_8224 stencil 1,1 8224
# the twins themselves
cat > /tmp/twins.py <<'PY'
import sys, cupy as cp, numpy as np
which = sys.argv[1]
src = open(f"validate/kernels/{which}.cu").read()
if which == "block_scan":
    f = cp.RawModule(code=src).get_function("block_scan"); n = 1 << 26
    x = cp.ones(n, dtype=cp.float32); y = cp.zeros(n, dtype=cp.float32); a = ((n // 1024,), (512,), (x, y))
else:
    f = cp.RawModule(code=src).get_function("stencil5"); n = 8192
    x = cp.ones(n * n, dtype=cp.float32); y = cp.zeros(n * n, dtype=cp.float32); g = (n + 31) // 32
    a = ((g, g), (32, 8), (x, y, np.int32(n)))
for _ in range(2): f(*a)
cp.cuda.Device().synchronize()
PY
for k in block_scan stencil5; do
  ncu --clock-control none --launch-skip 1 --launch-count 1 --csv --metrics "$metrics" python3 /tmp/twins.py $k \
      >"$out/raw/twin_$k.csv" 2>"$out/raw/twin_$k.err"; echo "twin $k rc=$?"
done
tar -C "$out" -czf "$out/ncu_parts.tgz" raw && rm -rf "$out/raw"
