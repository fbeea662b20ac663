"""Cost of a 2D TMA tensor load (cp.async.bulk.tensor.2d) on the H100 against the box shape: inner width 32, 64,
128 B (16, 32, 64 bf16, with the matching 32B/64B/128B swizzle) x 32, 64, 128, 256 rows.

    python3 validate/micro/run_tma_box.py --out validate/measurements/h100/tmabox-2026-11-24.json

(`--dry` prints the planned cases; it needs neither CuPy nor a GPU.)

Why: hgemm_tma_wgmma runs 42% slower with 64B-swizzle boxes (half as wide, twice as many boxes for the same bytes)
than with 128B ones, and the simulator's TMA model is per copy (1D bulk copies, validate/micro/hopper.cu: 61 cycles
to issue, a new copy every 157 cycles, 113 B/clk within a copy). This measures per-box and per-row costs.

Kernel: validate/micro/tma_box.cu `tma_box` (header comment), built for sm_90a with -I validate/kernels (NVRTC
through CuPy; nvcc -cubin if that fails). One CTA of 128 threads per SM (grid = SM count; dynamic shared memory
padded to 120 KiB so that no SM holds two) or one CTA alone (grid 1, "one SM"); thread 0 fills a ring of `stages`
shared-memory slots, each slot `k` boxes on one mbarrier (wait for the slot's previous fill, expect_tx, k tensor
loads), n = 512 boxes per CTA, boxes at new (x, y) each time (the CTAs together walk the tensor in order, wrapping).
Tensor maps: validate/tma.py encode_2d (cuTensorMapEncodeTiled through ctypes), bf16, L2 promotion 256 B (the
twins' setting), passed by value as a `const __grid_constant__` 128-byte struct (tma.kernel_arg: a shape-(1,)
numpy array of a 128-byte structured dtype, which CuPy passes by value), as validate/run_tc_sm90.py does.

Ring modes (per box shape):
  ring4    4 stages x 1 box (the plain ring: one mbarrier wait + expect_tx per box);
  lat      1 stage x 1 box (each box waits for the last: the latency of one box load plus the loop);
  stage16k 4 stages x k boxes, k = 16 KiB / box bytes (at least 1): the GEMM twins' pattern (one expect_tx per
           stage, several boxes per barrier; 64B boxes of 128 rows -> 2 per stage, as in hgemm_tma_wgmma with
           64B swizzle), same 64 KiB in flight for every shape below 32 KiB.
Sources: "l2" a 4096 x 1024 bf16 tensor (8 MiB; read whole by `read_all` right before every launch, so
L2-resident), "hbm" a 32768 x 16384 bf16 tensor (1 GiB; a 256 MiB scratch buffer is read before every launch,
which evicts it from L2 with clean lines). Each case: one warm-up launch, then `--reps` (3) timed launches; per
launch the median over CTAs, then the median over launches.

Reported per case: box bytes; cycles per box (clock64 from before the first issue to after the last completion,
/ n; median over CTAs); steady cycles per box (from the completion of fill m/4 to the last, so without the ring's
fill and drain); issue cycles per box (clock64 around expect_tx + the k loads, clock reads included); bytes per
clock per SM (box bytes / cycles per box); chip bytes per ns (all boxes of all CTAs / the %globaltimer span from the
first CTA start to the last CTA end; also over the CUDA-event time of the launch); cycles per box row; SM clock
(clock64 / %globaltimer). `fits`: per (source, grid, mode, width) a line cycles = a + b x rows (a: per box,
b: per row), and per (source, grid, mode) cycles = a + b x rows + c x bytes over all 12 shapes.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
KDIR = HERE.parent / "kernels"
SRC = HERE / "tma_box.cu"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import common  # noqa: E402
import tma  # noqa: E402

WIDTHS = (32, 64, 128)  # inner box width in bytes = swizzle span
ROWS = (32, 64, 128, 256)
MODES = {"ring4": "4 stages x 1 box", "lat": "1 stage x 1 box", "stage16k": "4 stages x (16 KiB / box bytes) boxes"}
SOURCES = {"l2": (4096, 1024), "hbm": (32768, 16384)}  # (rows, cols) of the bf16 tensor
GRIDS = ("all", "one")
ELEM = 2  # bf16
BLOCK = 128
REC = 8
MAX_STAGES = 32
ONE_PER_SM_SMEM = 120 << 10  # two CTAs would need > 228 KiB: one CTA per SM
SMEM_MAX = 227 << 10
SCRATCH_BYTES = 256 << 20
SINK_WORDS = 64
LAUNCH_KEYS = ("cycles_per_box", "cycles_per_box_steady", "issue_cycles_per_box", "span_ns", "event_ns", "clock_mhz")


def stages_of(mode: str, box_bytes: int) -> tuple[int, int]:
    """(stages, boxes per stage) of a ring mode."""
    if mode == "ring4":
        return 4, 1
    if mode == "lat":
        return 1, 1
    if mode == "stage16k":
        return 4, max(1, (16 << 10) // box_bytes)
    raise ValueError(f"unknown mode {mode!r}")


def smem_bytes(stages: int, k: int, box_bytes: int) -> int:
    need = 8 * MAX_STAGES + 1024 + stages * k * box_bytes
    return max(need, ONE_PER_SM_SMEM)


def plan(a: argparse.Namespace) -> list[dict[str, Any]]:
    cases = []
    for src in a.sources:
        rows_t, cols_t = SOURCES[src]
        for grid in a.grids:
            for mode in a.modes:
                for w in a.widths:
                    for r in a.rows:
                        bb = w * r
                        st, k = stages_of(mode, bb)
                        n = a.n - a.n % k
                        cols = w // ELEM
                        cases.append({"source": src, "grid_kind": grid, "mode": mode, "width_bytes": w,
                                      "swizzle": w, "rows": r, "box_cols": cols, "box_bytes": bb, "stages": st,
                                      "boxes_per_stage": k, "n": n, "tensor_rows": rows_t, "tensor_cols": cols_t,
                                      "nbx": cols_t // cols, "nby": rows_t // r, "shared_bytes": smem_bytes(st, k, bb)})
    return cases


def dry(a: argparse.Namespace) -> int:
    cases = plan(a)
    print(f"source {SRC.relative_to(HERE.parent.parent)}; build: NVRTC -std=c++17 -arch=sm_90a -I{KDIR} "
          "(else nvcc -gencode=arch=compute_90a,code=sm_90a -cubin)")
    for s in a.sources:
        r, c = SOURCES[s]
        print(f"tensor {s}: {r} x {c} bf16 = {r * c * ELEM >> 20} MiB")
    print(f"grid: 'all' = SM count (132 on the H100), 'one' = 1; block {BLOCK}; n = {a.n} boxes per CTA; "
          f"{a.reps} timed launches + 1 warm-up per case; L2 promotion {a.l2_promotion} B")
    print(f"{'#':>3} {'src':<4} {'grid':<4} {'mode':<8} {'W':>4} {'rows':>4} {'box B':>6} {'S':>2} {'k':>2} "
          f"{'n':>4} {'nbx':>5} {'nby':>5} {'smem KiB':>8} {'MiB/launch (all)':>16}")
    for i, c in enumerate(cases):
        mib = 132 * c["n"] * c["box_bytes"] / 2**20 if c["grid_kind"] == "all" else c["n"] * c["box_bytes"] / 2**20
        print(f"{i:>3} {c['source']:<4} {c['grid_kind']:<4} {c['mode']:<8} {c['width_bytes']:>4} {c['rows']:>4} "
              f"{c['box_bytes']:>6} {c['stages']:>2} {c['boxes_per_stage']:>2} {c['n']:>4} {c['nbx']:>5} "
              f"{c['nby']:>5} {c['shared_bytes'] / 1024:>8.1f} {mib:>16.1f}")
    bad = [c for c in cases
           if c["shared_bytes"] > SMEM_MAX or c["stages"] > MAX_STAGES or c["n"] < 4 * c["boxes_per_stage"]]
    print(f"{len(cases)} cases; {len(bad)} over a limit")
    print(f"out: {a.out or '(--out not given)'}")
    return 1 if bad else 0


# ------------------------------------------------------------------------------------------------ GPU
def build(cp: Any) -> tuple[Any, str]:
    code = SRC.read_text()
    try:
        mod = cp.RawModule(code=code, options=("-std=c++17", "-arch=sm_90a", f"-I{KDIR}"))
        mod.get_function("tma_box")
        mod.get_function("read_all")
        return mod, "cupy RawModule (NVRTC) -std=c++17 -arch=sm_90a -I validate/kernels"
    except Exception as e:  # noqa: BLE001 - try nvcc next
        common.log(f"NVRTC build failed ({type(e).__name__}: {str(e)[-300:]}); trying nvcc")
    cubin = Path(tempfile.mkdtemp()) / "tma_box.cubin"
    cmd = ["nvcc", "-std=c++17", "-gencode=arch=compute_90a,code=sm_90a", f"-I{KDIR}", "-cubin", "-o", str(cubin),
           str(SRC)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError(p.stderr[-2000:])
    return cp.RawModule(path=str(cubin)), " ".join(cmd[:-3])


def launch_stats(rec: Any, case: dict[str, Any], grid: int) -> dict[str, float]:
    """Timing records of one launch (grid x REC) -> medians over CTAs."""
    import numpy as np

    r = np.asarray(rec, dtype=np.float64).reshape(grid, REC)
    t0, tq, t1, g0, g1, sm, issue, q0 = (r[:, i] for i in range(REC))
    n, k = case["n"], case["boxes_per_stage"]
    m = n // k
    cyc = t1 - t0
    per_box = cyc / n
    steady_fills = m - 1 - q0
    ok = (steady_fills > 0) & (tq > 0)
    steady = (t1[ok] - tq[ok]) / (steady_fills[ok] * k) if ok.any() else np.array([float("nan")])
    dt = g1 - g0
    good = dt > 0
    return {"cycles_per_box": float(np.median(per_box)), "cycles_per_box_min": float(per_box.min()),
            "cycles_per_box_max": float(per_box.max()), "cycles_per_box_steady": float(np.median(steady)),
            "issue_cycles_per_box": float(np.median(issue / n)), "cta_cycles_median": float(np.median(cyc)),
            "span_ns": float(g1.max() - g0.min()),
            "clock_mhz": float(np.median(cyc[good] / dt[good]) * 1e3) if good.any() else float("nan"),
            "distinct_sms": len(set(sm.astype(int).tolist()))}


def run_case(cp: Any, mod: Any, case: dict[str, Any], tensor: Any, scratch: Any, sink: Any, sms: int,
             reps: int, l2_promotion: int) -> dict[str, Any]:
    import numpy as np

    grid = sms if case["grid_kind"] == "all" else 1
    m = tma.encode_2d(int(tensor.data.ptr), rows=case["tensor_rows"], cols=case["tensor_cols"], elem_bytes=ELEM,
                      box_rows=case["rows"], box_cols=case["box_cols"], swizzle=case["swizzle"], dtype="bfloat16",
                      l2_promotion=l2_promotion)
    marg = tma.kernel_arg(m)
    f = mod.get_function("tma_box")
    f.max_dynamic_shared_size_bytes = SMEM_MAX
    rd = mod.get_function("read_all")
    rec = cp.zeros(grid * REC, dtype=cp.int64)
    args = (marg, np.int32(case["n"]), np.int32(case["stages"]), np.int32(case["boxes_per_stage"]),
            np.int32(case["box_bytes"]), np.int32(case["box_cols"]), np.int32(case["rows"]), np.int32(case["nbx"]),
            np.int32(case["nby"]), np.int32(0), rec)

    def prep() -> None:
        buf = tensor if case["source"] == "l2" else scratch
        rd((sms * 4,), (256,), (buf, np.int64(buf.nbytes // 16), sink))

    per: list[dict[str, float]] = []
    for i in range(reps + 1):
        prep()
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record()
        f((grid,), (BLOCK,), args, shared_mem=case["shared_bytes"])
        e.record()
        e.synchronize()
        st = launch_stats(rec.get(), case, grid)
        st["event_ns"] = cp.cuda.get_elapsed_time(s, e) * 1e6
        if i > 0:  # launch 0: warm-up (code, tensor map, TLB)
            per.append(st)
    med = {key: float(statistics.median(p[key] for p in per)) for key in per[0]}
    bb, rows = case["box_bytes"], case["rows"]
    total = grid * case["n"] * bb
    cyc, steady = med["cycles_per_box"], med["cycles_per_box_steady"]
    return {**case, "grid": grid, "reps": reps, **med,
            "bytes_per_clk_per_sm": bb / cyc, "bytes_per_clk_per_sm_steady": bb / steady,
            "chip_bytes_per_ns": total / med["span_ns"], "chip_bytes_per_ns_events": total / med["event_ns"],
            "cycles_per_row": cyc / rows, "cycles_per_row_steady": steady / rows,
            "ns_per_box": cyc / med["clock_mhz"] * 1e3,
            "launches": [{key: round(p[key], 2) for key in LAUNCH_KEYS} for p in per]}


def fits(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    import numpy as np

    out: list[dict[str, Any]] = []
    ok = [r for r in results if "error" not in r]
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for r in ok:
        groups.setdefault((r["source"], r["grid_kind"], r["mode"]), []).append(r)
    for (src, grid, mode), rr in groups.items():
        for key in ("cycles_per_box_steady", "cycles_per_box"):
            for w in sorted({r["width_bytes"] for r in rr}):
                pts = [(r["rows"], r[key]) for r in rr if r["width_bytes"] == w and np.isfinite(r[key])]
                if len(pts) >= 2:
                    x, y = np.array(pts).T
                    b, a = np.polyfit(x, y, 1)
                    out.append({"source": src, "grid_kind": grid, "mode": mode, "of": key, "width_bytes": w,
                                "model": "a + b * rows", "a_cycles_per_box": float(a), "b_cycles_per_row": float(b),
                                "max_abs_residual": float(np.abs(y - (a + b * x)).max())})
            pts = [(r["rows"], r["box_bytes"], r[key]) for r in rr if np.isfinite(r[key])]
            if len(pts) >= 4:
                x = np.array(pts)
                A = np.column_stack([np.ones(len(x)), x[:, 0], x[:, 1]])
                coef, *_ = np.linalg.lstsq(A, x[:, 2], rcond=None)
                out.append({"source": src, "grid_kind": grid, "mode": mode, "of": key, "width_bytes": "all",
                            "model": "a + b * rows + c * bytes", "a_cycles_per_box": float(coef[0]),
                            "b_cycles_per_row": float(coef[1]), "c_cycles_per_byte": float(coef[2]),
                            "max_abs_residual": float(np.abs(x[:, 2] - A @ coef).max())})
    return out


def table(results: list[dict[str, Any]]) -> None:
    print(f"\n{'src':<4} {'grid':<4} {'mode':<8} {'W':>4} {'rows':>4} {'box B':>6} {'S':>2} {'k':>2} {'cyc/box':>8} "
          f"{'steady':>8} {'issue':>6} {'B/clk/SM':>8} {'chip B/ns':>9} {'cyc/row':>7} {'MHz':>5} {'SMs':>4}")
    for r in results:
        head = (f"{r['source']:<4} {r['grid_kind']:<4} {r['mode']:<8} {r['width_bytes']:>4} {r['rows']:>4} "
                f"{r['box_bytes']:>6} {r['stages']:>2} {r['boxes_per_stage']:>2}")
        if "error" in r:
            print(f"{head} ERROR {r['error'][:100]}")
            continue
        print(f"{head} {r['cycles_per_box']:>8.1f} {r['cycles_per_box_steady']:>8.1f} "
              f"{r['issue_cycles_per_box']:>6.1f} {r['bytes_per_clk_per_sm']:>8.2f} {r['chip_bytes_per_ns']:>9.1f} "
              f"{r['cycles_per_row']:>7.2f} {r['clock_mhz']:>5.0f} {r['distinct_sms']:>4}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="JSON to write")
    ap.add_argument("--dry", action="store_true", help="print the planned cases; no CuPy, no GPU")
    ap.add_argument("--n", type=int, default=512, help="boxes per CTA")
    ap.add_argument("--reps", type=int, default=3, help="timed launches per case (after one warm-up)")
    ap.add_argument("--modes", default=",".join(MODES), help=f"comma-separated, of {list(MODES)}")
    ap.add_argument("--sources", default="l2,hbm")
    ap.add_argument("--grids", default="all,one")
    ap.add_argument("--widths", default=",".join(map(str, WIDTHS)))
    ap.add_argument("--rows", default=",".join(map(str, ROWS)))
    ap.add_argument("--l2-promotion", type=int, default=256, choices=(0, 64, 128, 256))
    a = ap.parse_args()
    a.modes = [m for m in a.modes.split(",") if m]
    a.sources = [s for s in a.sources.split(",") if s]
    a.grids = [g for g in a.grids.split(",") if g]
    a.widths = [int(w) for w in a.widths.split(",") if w]
    a.rows = [int(r) for r in a.rows.split(",") if r]
    for m in a.modes:
        if m not in MODES:
            ap.error(f"unknown mode {m}")
    for s in a.sources:
        if s not in SOURCES:
            ap.error(f"unknown source {s}")
    for g in a.grids:
        if g not in GRIDS:
            ap.error(f"unknown grid {g}")
    for w in a.widths:
        if w not in (32, 64, 128):
            ap.error("widths are 32, 64 or 128 bytes (the swizzle span)")
    for r in a.rows:
        if not 1 <= r <= 256:
            ap.error("rows are 1..256 (a TMA box dimension is at most 256)")
    if a.dry:
        return dry(a)
    if not a.out:
        ap.error("--out is required")
    import cupy as cp

    t_start = time.time()
    out = Path(a.out)
    res = common.cupy_header(cp, "micro-1") | {"command": " ".join(sys.argv), "results": []}
    mod, how = build(cp)
    sms = res["gpu"]["sm_count"]
    common.log(f"built: {how}; {sms} SMs")
    tensors: dict[str, Any] = {}
    for s in a.sources:
        r, c = SOURCES[s]
        t = cp.empty((r, c), dtype=cp.uint16)  # raw bf16 bits
        flat = t.reshape(-1)
        flat[:] = ((cp.arange(flat.size, dtype=cp.uint32) * cp.uint32(2654435761)) >> cp.uint32(16)).astype(cp.uint16)
        tensors[s] = t
    scratch = cp.ones(SCRATCH_BYTES, dtype=cp.uint8)
    sink = cp.zeros(SINK_WORDS, dtype=cp.uint32)
    cp.cuda.runtime.deviceSynchronize()
    cases = plan(a)
    res["method"] = {
        "build": how, "kernel": "validate/micro/tma_box.cu tma_box (header comment)", "block": BLOCK,
        "grid": {"all": sms, "one": 1}, "boxes_per_cta": a.n, "reps": a.reps, "modes": MODES,
        "sources": {s: {"rows": SOURCES[s][0], "cols": SOURCES[s][1], "dtype": "bf16",
                        "bytes": SOURCES[s][0] * SOURCES[s][1] * ELEM} for s in a.sources},
        "prep": {"l2": "read_all over the tensor before every launch (L2-resident)",
                 "hbm": f"read_all over a {SCRATCH_BYTES >> 20} MiB scratch buffer before every launch (tensor "
                        "evicted from L2, clean lines)"},
        "tensor_map": "validate/tma.py encode_2d: bf16, box {W/2 cols, rows}, swizzle = W, interleave none, "
                      f"OOB fill none, L2 promotion {a.l2_promotion} B; passed by value (const __grid_constant__ "
                      "TmaMap, tma.kernel_arg -> shape-(1,) numpy array of a 128-byte structured dtype)",
        "shared": f"dynamic, max(needed, {ONE_PER_SM_SMEM >> 10} KiB) so that an SM holds one CTA",
        "cycles_per_box": "clock64 from before the first expect_tx to after the last completion, / n; median over "
                          "CTAs, then median over the timed launches",
        "cycles_per_box_steady": "clock64 from the completion of fill m/4 to the last completion, / boxes in between",
        "issue_cycles_per_box": "clock64 around expect_tx + the stage's k tensor loads, summed, / n (clock reads "
                                "included)",
        "chip_bytes_per_ns": "grid x n x box bytes / (last CTA end - first CTA start), %globaltimer; "
                             "chip_bytes_per_ns_events: over the CUDA-event time of the launch",
    }
    for i, c in enumerate(cases):
        tag = (f"[{i + 1}/{len(cases)}] {c['source']} {c['grid_kind']} {c['mode']} W={c['width_bytes']} "
               f"rows={c['rows']} S={c['stages']} k={c['boxes_per_stage']}")
        try:
            r = run_case(cp, mod, c, tensors[c["source"]], scratch, sink, sms, a.reps, a.l2_promotion)
            res["results"].append(r)
            common.log(f"{tag}: {r['cycles_per_box']:.1f} cycles/box (steady {r['cycles_per_box_steady']:.1f}, "
                       f"issue {r['issue_cycles_per_box']:.1f}), {r['bytes_per_clk_per_sm']:.2f} B/clk/SM, "
                       f"{r['chip_bytes_per_ns']:.0f} B/ns")
        except Exception as e:  # noqa: BLE001 - record, then stop only on a sticky error
            res["results"].append({**c, "error": f"{type(e).__name__}: {str(e)[-1500:]}"})
            common.log(f"{tag}: ERROR {type(e).__name__}: {str(e)[-300:]}")
            try:
                cp.cuda.runtime.deviceSynchronize()
            except Exception as e2:  # noqa: BLE001 - the context is gone
                res["sticky_error"] = f"{type(e2).__name__}: {e2}"
                common.log("sticky CUDA error, stopping")
                break
        if i % 12 == 11:
            common.write_json(out, res)
    res["fits"] = fits(res["results"])
    res["method"]["seconds"] = round(time.time() - t_start, 1)
    common.write_json(out, res)
    table(res["results"])
    print(f"\n{'src':<4} {'grid':<4} {'mode':<8} {'W':>4}  fit of steady cycles/box")
    for ft in res["fits"]:
        if ft["of"] != "cycles_per_box_steady":
            continue
        extra = f" + {ft['c_cycles_per_byte']:.4f} x bytes" if "c_cycles_per_byte" in ft else ""
        print(f"{ft['source']:<4} {ft['grid_kind']:<4} {ft['mode']:<8} {ft['width_bytes']!s:>4}  "
              f"{ft['a_cycles_per_box']:.1f} + {ft['b_cycles_per_row']:.3f} x rows{extra}  "
              f"(max residual {ft['max_abs_residual']:.1f})")
    common.log(f"wrote {out} in {time.time() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
