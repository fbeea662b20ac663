"""Merge the knob sweeps of validate/run_knobs.sh (the raw outputs in validate/measurements/h100/raw-<date>/) into
one schema-1 family file, validate/measurements/h100/knobs-<date>.json, that `gpusim validate` reads (its knob
table compares each setting with the default row of the same kernel and shape, measured in the same session).

    python3 validate/merge_knobs.py --date 2026-11-28
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

H100 = Path(__file__).resolve().parent / "measurements" / "h100"
PARTS = ("sm80", "sm90", "fa3", "fp32knobs")  # run_tc_sm80.py, run_tc_sm90.py, run_fa3.py, run_fp32_knobs.py
KEEP = ("kernel", "shape", "params", "correct", "time_ns", "registers_per_thread", "grid", "block", "defines",
        "shared_bytes_per_block", "rel_err", "max_rel_err", "twin", "tflops")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--date", required=True)
    a = ap.parse_args()
    raw = H100 / f"raw-{a.date}"
    parts = {p: json.loads((raw / f"{p}-{a.date}.json").read_text()) for p in PARTS}
    head = parts["sm80"]
    out = {"schema": 1, "date": a.date, "gpu": head["gpu"],
           "how": {"what": "issue 29's knob sweeps: hgemm_mma_pipelined stages 1-6 and fa2 br/bc at two sequence "
                           "lengths (run_tc_sm80.py), hgemm_ws stages 1-4 (5 and 6 need more than 227 KiB of "
                           "shared memory at bn=256: the twin's #error) and hgemm_persistent order row/grouped/"
                           "hilbert at two shapes (run_tc_sm90.py), fa3 stages 1-6 at d=64 (1-3 at d=128: 4+ need "
                           "more than 227 KiB) and bc 64/128/176 at two sequence lengths (run_fa3.py), the FP32 "
                           "tile sweeps at 2048^3 (run_fp32_knobs.py); every sweep's default row measured in the "
                           "same session at a shape no other file holds",
                   "command": "bash validate/run_knobs.sh 1; bash validate/run_knobs.sh 2 (device calls), then "
                              "python3 validate/merge_knobs.py --date " + a.date,
                   "cases": "validate/knobs/{sm80,sm90,fa3}.json",
                   "raw": f"validate/measurements/h100/raw-{a.date}/ (each script's own JSON, with its method "
                          "text, and its log)"},
           "methods": {p: d.get("method") or d.get("how") for p, d in parts.items()},
           "software": parts["fp32knobs"].get("software"),
           "kernels": []}
    for p in PARTS:
        for e in parts[p]["kernels"]:
            if not e.get("correct") or "time_ns" not in e:
                continue
            row = {k: e[k] for k in KEEP if k in e}
            if p == "fa3" and "time_ns" in row:
                row["time_ns"] = {k: v for k, v in row["time_ns"].items() if k in ("median", "min", "max", "n")}
            row["source"] = p
            out["kernels"].append(row)
    path = H100 / f"knobs-{a.date}.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path}: {len(out['kernels'])} rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
