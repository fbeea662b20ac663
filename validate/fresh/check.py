"""The fresh kernels (cases.py): predict them before they are measured, then compare with the H100.

    python validate/fresh/check.py --predict validate/fresh/predicted-2026-11-28.json   # commit it, then measure
    python validate/fresh/check.py validate/measurements/h100/fresh-2026-11-28.json     # per kernel, after
    python validate/fresh/check.py FILE --now     # and beside it, what the model says today

The comparison reads the committed predictions (the file ``--predicted`` names, the newest by default), so what it
prints is what the model said before anyone saw the H100's numbers: time (median of CUDA-event launches after an L2
flush, as the twins are timed), and ncu's DRAM bytes, instructions and global sectors. Predictions use the binary the
measurement runs (NVRTC, as CuPy builds it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from cases import CASES  # noqa: E402

KEYS = ("gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum", "smsp__inst_executed.sum",
        "lts__t_sector_hit_rate.pct", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "gpusim__limiter")
COMPARED = (("time", "gpu__time_duration.sum"), ("DRAM read", "dram__bytes_read.sum"),
            ("DRAM write", "dram__bytes_write.sum"), ("instructions", "smsp__inst_executed.sum"))


def predictions(quiet: bool = False) -> list[dict]:
    """Every case predicted by the model as it is now."""
    from gpusim.api import predict_source
    from gpusim.bottleneck import analyze
    from gpusim.config import load_config

    cfg = load_config(None)
    rows = []
    for c in CASES:
        m, _ = predict_source(HERE / f"{c['name']}.cu", c["name"], grid=c["grid"], block=c["block"],
                              args=list(c["args"]), compiler="nvrtc", config=cfg)
        row = {"name": c["name"], **{k: m[k] for k in KEYS if k in m}, "verdict": analyze(m, cfg).verdict}
        rows.append(row)
        if not quiet:
            print(f"{c['name']:<16} {m['gpu__time_duration.sum'] / 1e3:9.1f} us  {row['verdict'][:100]}", flush=True)
    return rows


def predict(out: Path) -> None:
    from gpusim.config import load_config

    rows = predictions()
    out.write_text(json.dumps({"schema": "fresh-predicted-1", "config": load_config(None).name, "kernels": rows},
                              indent=1) + "\n")
    print(f"wrote {out}")


def _err(p: float | None, m: float | None) -> float | None:
    if p is None or m is None or not m:
        return None
    return 100.0 * (p - m) / m


def compare(measured: Path, predicted: Path, now: bool = False) -> None:
    pred = {r["name"]: r for r in json.loads(predicted.read_text())["kernels"]}
    meas = json.loads(measured.read_text())
    print(f"predicted: {predicted.relative_to(HERE.parent.parent)} (committed before the measurement); "
          f"measured: {measured.name} on {meas['gpu']['name']}")
    _table(meas, pred)
    if now:
        print("\nthe model now (its changes since were made after the measurement: not a blind prediction)")
        _table(meas, {r["name"]: r for r in predictions(quiet=True)})


def _table(meas: dict, pred: dict) -> None:
    print(f"{'kernel':<16} {'measured us':>11} {'predicted us':>12} " + " ".join(f"{n:>12}" for n, _ in COMPARED))
    errs = []
    for e in meas["cases"]:
        p = pred.get(e["name"])
        if p is None:
            continue
        ncu = e.get("ncu", {})
        t = e["time_ns"]["median"]
        cells = []
        for label, key in COMPARED:
            v = _err(p.get(key), t if label == "time" else ncu.get(key))
            cells.append(f"{v:+11.1f}%" if v is not None else f"{'-':>12}")
        errs.append(abs(_err(p["gpu__time_duration.sum"], t)))
        print(f"{e['name']:<16} {t / 1e3:>11.1f} {p['gpu__time_duration.sum'] / 1e3:>12.1f} " + " ".join(cells))
    for f in meas.get("failed", []):
        print(f"{f['name']:<16} failed on the H100: {f['error'].strip().splitlines()[-1]}")
    if errs:
        print(f"time MAPE {sum(errs) / len(errs):.1f}% over {len(errs)} kernels, worst {max(errs):.1f}% "
              f"(goal of the validated twins: <= 8% MAPE, <= 20% worst)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("measured", nargs="?", type=Path)
    ap.add_argument("--predict", type=Path, metavar="OUT.json")
    ap.add_argument("--predicted", type=Path)
    ap.add_argument("--now", action="store_true", help="also predict every case with the model as it is now")
    a = ap.parse_args()
    if a.predict:
        predict(a.predict)
        return 0
    if not a.measured:
        ap.error("give a measurement file or --predict OUT.json")
    predicted = a.predicted or max(HERE.glob("predicted-*.json"))
    compare(a.measured, predicted, a.now)
    return 0


if __name__ == "__main__":
    sys.exit(main())
