#!/bin/bash
# The knob sweeps and the public-ladder comparison of issue 29, on the H100, in two device calls:
#   bash validate/run_knobs.sh 1   # public SGEMM kernels beside our twins; the rewritten sgemm_double_buffered
#                                  # twin at the ladder's three shapes (with ncu); FP32 tiles at 2048^3; the sm80
#                                  # sweeps (hgemm_mma_pipelined stages, fa2 br/bc)
#   bash validate/run_knobs.sh 2   # the sm90 sweeps (hgemm_ws stages, hgemm_persistent order) and fa3 (stages, bc)
# Output under $OUT (packed as knobs-<call>.tar.gz: the device returns a few files only); validate/merge_knobs.py then writes validate/measurements/h100/knobs-<date>.json.
# Each step has its own time limit so one slow step cannot take the others' time.
set -u
FINAL=${OUT:-/tmp/knobs_final}
OUT=/tmp/knobs_work_$1
mkdir -p "$OUT" "$FINAL"
D=2026-11-28
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,pstate \
  --format=csv > "$OUT/nvidia-smi-$1.txt" 2>&1
if [ "$1" = 1 ]; then
  timeout 110 python3 validate/run_public_sgemm.py --out "$OUT/public-sgemm-$D.json" > "$OUT/public.log" 2>&1
  echo "public rc=$?"; tail -13 "$OUT/public.log"
  timeout 170 python3 validate/run_h100.py --kernels sgemm_double_buffered --out "$OUT/ladder11-$D.json" \
    --date $D > "$OUT/ladder11.log" 2>&1
  echo "ladder11 rc=$?"; grep -i "sgemm_double\|error" "$OUT/ladder11.log" | tail -8
  timeout 40 python3 validate/run_fp32_knobs.py --shape 2048,2048,2048 --out "$OUT/fp32knobs-$D.json" \
    > "$OUT/fp32.log" 2>&1
  echo "fp32 rc=$?"; tail -9 "$OUT/fp32.log"
  timeout 200 python3 validate/run_tc_sm80.py --cases validate/knobs/sm80.json --skip-ncu --date $D \
    --out "$OUT/sm80-$D.json" > "$OUT/sm80.log" 2>&1
  echo "sm80 rc=$?"; grep -E "hgemm|fa2|ERROR" "$OUT/sm80.log" | tail -16
fi
if [ "$1" = 2 ]; then
  timeout 100 python3 validate/run_tc_sm80.py --cases validate/knobs/sm80.json --skip-ncu --date $D \
    --out "$OUT/sm80-$D.json" > "$OUT/sm80.log" 2>&1
  echo "sm80 rc=$?"; grep -E "hgemm|fa2|ERROR" "$OUT/sm80.log" | tail -16
  timeout 230 python3 validate/run_tc_sm90.py --cases validate/knobs/sm90.json --skip-ncu --date $D \
    --out "$OUT/sm90-$D.json" > "$OUT/sm90.log" 2>&1
  echo "sm90 rc=$?"; grep -E "hgemm_|error" "$OUT/sm90.log" | tail -14
  timeout 300 python3 validate/run_fa3.py --cases validate/knobs/fa3.json --skip-ncu --skip-smoke --date $D \
    --out "$OUT/fa3-$D.json" > "$OUT/fa3.log" 2>&1
  echo "fa3 rc=$?"; grep -E "correct=|error" "$OUT/fa3.log" | tail -18
fi
rm -f "$OUT"/*.cubin
tar -czf "$FINAL/knobs-$1.tar.gz" -C "$OUT" .
