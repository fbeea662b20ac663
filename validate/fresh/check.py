"""The fresh kernels (cases.py): predict them before they are measured, then compare with the H100.

    python validate/fresh/check.py --predict validate/fresh/predicted-2026-11-28.json   # commit it, then measure
    python validate/fresh/check.py validate/measurements/h100/fresh-2026-11-28.json     # per kernel, after
    python validate/fresh/check.py FILE --now     # and beside it, what the model says today

    python validate/fresh/check.py --batch atomics --predict validate/fresh/predicted-atomics-2026-11-28.json
    python validate/fresh/check.py --batch atomics validate/measurements/h200/fresh-atomics-2026-11-28.json

``--batch`` picks the cases (cases.BATCHES; the first batch when not named) and the predictions the comparison reads
by default (``predicted-BATCH-*.json`` for a named batch, ``predicted-DATE.json`` for the first). A batch measured on
another GPU than the H100 is predicted with that GPU's config (BATCH_CONFIG); a case the front-end refuses
(``refused`` in cases.py) is kept out of the predictions and printed with its refusal.

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

from cases import BATCHES, FIRST, kernel_of  # noqa: E402

KEYS = ("gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum", "smsp__inst_executed.sum",
        "lts__t_sector_hit_rate.pct", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "gpusim__limiter")
ATOMIC_KEYS = ("lts__t_requests_op_red.sum", "lts__t_requests_op_atom.sum", "lts__t_sectors_op_red.sum",
               "lts__t_sectors_op_atom.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
               "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", "smsp__inst_executed_op_global_red.sum",
               "smsp__inst_executed_op_global_atom.sum", "gpusim__global_lines_op_atom")
BATCH_KEYS = {"atomics": KEYS[:-1] + ATOMIC_KEYS + KEYS[-1:]}  # the first batch keeps KEYS
BATCH_CONFIG = {"atomics": "h200"}  # measured on an H200 (the only GPU lent that day); others: the default (H100)
COMPARED = (("time", "gpu__time_duration.sum"), ("DRAM read", "dram__bytes_read.sum"),
            ("DRAM write", "dram__bytes_write.sum"), ("instructions", "smsp__inst_executed.sum"))


def config_of(batch: str, name: str | None = None):
    """The hardware config a batch is predicted with (``name``, a bundled config's name, overrides it)."""
    from gpusim.config import CONFIG_DIR, load_config

    name = name or BATCH_CONFIG.get(batch)
    return load_config(CONFIG_DIR / f"{name}.toml" if name else None)


def predictions(batch: str = FIRST, quiet: bool = False, config: str | None = None, now: bool = False) -> list[dict]:
    """Every case of a batch the front-end takes, predicted by the model as it is now."""
    from gpusim.api import predict_source
    from gpusim.bottleneck import analyze

    cfg = config_of(batch, config)
    keys = BATCH_KEYS.get(batch, KEYS)
    rows = []
    for c in BATCHES[batch]:
        if c.get("refused") and not now:  # refused when the batch was predicted; ``now``: tried again
            continue
        k = kernel_of(c)
        m, _ = predict_source(HERE / f"{k}.cu", k, grid=c["grid"], block=c["block"],
                              args=list(c["args"]), compiler="nvrtc", config=cfg)
        row = {"name": c["name"], **{k: m[k] for k in keys if k in m}, "verdict": analyze(m, cfg).verdict}
        rows.append(row)
        if not quiet:
            print(f"{c['name']:<16} {m['gpu__time_duration.sum'] / 1e3:9.1f} us  {row['verdict'][:100]}", flush=True)
    return rows


def predict(out: Path, batch: str = FIRST) -> None:
    from gpusim.config import load_config

    if batch == FIRST:  # the first batch's file, as it was written
        data = {"schema": "fresh-predicted-1", "config": load_config(None).name, "kernels": predictions()}
    else:  # with the H100's predictions beside, where the batch is measured on another GPU
        data = {"schema": "fresh-predicted-1", "batch": batch, "config": config_of(batch).name,
                "kernels": predictions(batch)}
        if BATCH_CONFIG.get(batch):
            print("and with the H100's config (kernels_h100, for reference):")
            data["kernels_h100"] = predictions(batch, config="h100_sxm")
        data["refused"] = {c["name"]: c["refused"] for c in BATCHES[batch] if c.get("refused")}
    out.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {out}")


def _err(p: float | None, m: float | None) -> float | None:
    if p is None or m is None or not m:
        return None
    return 100.0 * (p - m) / m


def compare(measured: Path, predicted: Path, now: bool = False, batch: str = FIRST) -> None:
    pdata = json.loads(predicted.read_text())
    pred = {r["name"]: r for r in pdata["kernels"]}
    meas = json.loads(measured.read_text())
    print(f"predicted: {predicted.relative_to(HERE.parent.parent)} (committed before the measurement); "
          f"measured: {measured.name} on {meas['gpu']['name']}")
    if batch != FIRST:
        cfg = config_of(batch)
        same = meas["gpu"]["name"] in cfg.device_names
        print(f"predicted with the config {cfg.name!r}" + ("" if same else
              f" (NOT the measured GPU's: {meas['gpu']['name']!r} is none of {list(cfg.device_names)})"))
    _table(meas, pred, batch)
    for name, line in sorted(pdata.get("refused", {}).items()):
        print(f"{name:<20} refused by the front-end (not predicted): {line}")
    if now:
        print("\nthe model now (its changes since were made after the measurement: not a blind prediction)")
        _table(meas, {r["name"]: r for r in predictions(batch, quiet=True, now=True)}, batch)


def _table(meas: dict, pred: dict, batch: str = FIRST) -> None:
    if batch != FIRST:
        return _atomic_table(meas, pred)
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


def _atomic_table(meas: dict, pred: dict) -> None:
    """Time, DRAM, instructions, then the atomics' L2 requests (ncu's RED + ATOM) and what the model sends."""
    print(f"{'kernel':<20} {'measured us':>11} {'predicted us':>12} " + " ".join(f"{n:>12}" for n, _ in COMPARED)
          + f" {'L2 atom req':>11} {'pred. lines':>11} {'ok':>3}")
    errs = []
    for e in meas["cases"]:
        ncu = e.get("ncu", {})
        t = e["time_ns"]["median"]
        req = sum(ncu.get(k, 0) for k in ("lts__t_requests_op_red.sum", "lts__t_requests_op_atom.sum"))
        reqc = f"{req:>11.0f}" if ncu else f"{'-':>11}"
        ok = {True: "yes", False: "NO"}.get(e.get("correct"), "-")
        p = pred.get(e["name"])
        if p is None:
            print(f"{e['name']:<20} {t / 1e3:>11.1f} {'-':>12} " + " ".join(f"{'-':>12}" for _ in COMPARED)
                  + f" {reqc} {'-':>11} {ok:>3}")
            continue
        cells = []
        for label, key in COMPARED:
            v = _err(p.get(key), t if label == "time" else ncu.get(key))
            cells.append(f"{v:+11.1f}%" if v is not None else f"{'-':>12}")
        errs.append(abs(_err(p["gpu__time_duration.sum"], t)))
        lines = p.get("gpusim__global_lines_op_atom")
        print(f"{e['name']:<20} {t / 1e3:>11.1f} {p['gpu__time_duration.sum'] / 1e3:>12.1f} " + " ".join(cells)
              + f" {reqc} {lines if lines is not None else '-':>11} {ok:>3}")
    for f in meas.get("failed", []):
        print(f"{f['name']:<20} failed on the {meas['gpu']['name']}: {f['error'].strip().splitlines()[-1]}")
    if errs:
        print(f"time MAPE {sum(errs) / len(errs):.1f}% over {len(errs)} kernels, worst {max(errs):.1f}% "
              f"(goal of the validated twins: <= 8% MAPE, <= 20% worst)")


def newest_predicted(batch: str = FIRST) -> Path:
    """The newest committed predictions of a batch: ``predicted-DATE.json`` for the first, ``predicted-BATCH-*``."""
    if batch == FIRST:
        files = [p for p in HERE.glob("predicted-*.json") if p.stem.removeprefix("predicted-")[:1].isdigit()]
    else:
        files = list(HERE.glob(f"predicted-{batch}-*.json"))
    if not files:
        raise SystemExit(f"check.py: no predicted-*.json for the batch {batch!r} in {HERE}")
    return max(files)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("measured", nargs="?", type=Path)
    ap.add_argument("--predict", type=Path, metavar="OUT.json")
    ap.add_argument("--predicted", type=Path)
    ap.add_argument("--now", action="store_true", help="also predict every case with the model as it is now")
    ap.add_argument("--batch", default=FIRST, choices=list(BATCHES), help=f"the cases (default {FIRST})")
    a = ap.parse_args()
    if a.predict:
        predict(a.predict, a.batch)
        return 0
    if not a.measured:
        ap.error("give a measurement file or --predict OUT.json")
    predicted = a.predicted or newest_predicted(a.batch)
    compare(a.measured, predicted, a.now, a.batch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
