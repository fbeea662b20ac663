#!/bin/bash
# Issue 29, device calls 3 and 4: the twins rewritten to the public kernels' code (validate/kernels/), measured
# at the ladder's three shapes with ncu (run_h100.py), and the public ladder again beside every current twin
# (run_public_sgemm.py). Output packed as $OUT/<tag>.tar.gz.
#   bash validate/run_ladder_twins.sh ladder79 sgemm_bank_linearized,sgemm_autotuned   # call 3
#   bash validate/run_ladder_twins.sh ladder8 sgemm_bank_padded                         # call 4
set -u
TAG=$1
KERNELS=$2
FINAL=${OUT:-/tmp/${TAG}_final}
W=/tmp/${TAG}_work
mkdir -p "$W" "$FINAL"
D=2026-11-28
timeout 110 python3 validate/run_public_sgemm.py --out "$W/public-sgemm-$D.json" > "$W/public.log" 2>&1
echo "public rc=$?"; tail -12 "$W/public.log"
timeout 200 python3 validate/run_h100.py --kernels "$KERNELS" --out "$W/$TAG-$D.json" --date $D > "$W/$TAG.log" 2>&1
echo "$TAG rc=$?"; grep -E "^sgemm_|error" "$W/$TAG.log" | tail -8
rm -f "$W"/*.cubin
tar -czf "$FINAL/$TAG.tar.gz" -C "$W" .
