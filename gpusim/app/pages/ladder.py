"""Ladder: every rung of a ladder, predicted beside measured, as bars and on a roofline; why a rung is faster."""

from __future__ import annotations

import math

import altair as alt
import pandas as pd
import streamlit as st

from gpusim import roofline as rl
from gpusim.app import catalog, ladder
from gpusim.app.pages import common
from gpusim.ladder_shapes import SQUARE_PREFIXES, rung_shape
from gpusim.ncu import TIME

LABELS = {"sgemm": "FP32 SGEMM ladder", "hgemm": "tensor-core GEMM ladder", "attention": "attention kernels"}

st.title("Ladder")
st.markdown(
    "A ladder is a sequence of kernels for one problem, each rung one idea faster than the one below "
    "(Simon Boehm's FP32 SGEMM ladder; the tensor-core ladder from mma.sync to warp-specialized wgmma; "
    "FlashAttention 2 and 3). Bars compare the simulator's prediction with the time measured on a real H100.")


@st.cache_data(show_spinner=False, max_entries=256)
def flops_of(name: str, shape: tuple[int, ...]) -> int | None:
    try:
        return catalog.build(name, shape, None).flops
    except ValueError:
        return None


def pick_rung(chart_key: str) -> None:
    """Clicking a bar selects that rung in the selectbox below."""
    sel = st.session_state.get(chart_key)
    points = (sel or {}).get("selection", {}).get("rung", []) if isinstance(sel, dict) else []
    if not points and sel is not None and hasattr(sel, "selection"):
        points = sel.selection.get("rung", [])
    if points and points[0].get("kernel"):
        st.session_state["ld_rung"] = points[0]["kernel"]


def bars(df: pd.DataFrame, order: list[str], refs: list[ladder.Reference], y: str,
         flops: int | None) -> alt.Chart:
    as_gflops = y == "GFLOP/s"
    long = df.melt(id_vars=["kernel"], value_vars=[f"predicted {y}", f"measured {y}"], var_name="source",
                   value_name=y).dropna()
    long["source"] = long["source"].str.split().str[0]
    sel = alt.selection_point(name="rung", fields=["kernel"], on="click")
    # bars on a log axis need an explicit base: one decade below the smallest value
    floor = 10 ** math.floor(math.log10(max(float(long[y].min()), 1e-9))) if len(long) else 1.0
    chart = alt.Chart(long).mark_bar().encode(
        x=alt.X("kernel:N", sort=order, title=None, axis=alt.Axis(labelAngle=-35, labelLimit=240, labelOverlap=False)),
        xOffset=alt.XOffset("source:N", sort=["predicted", "measured"]),
        y=alt.Y(f"{y}:Q", scale=alt.Scale(type="log", domainMin=floor), title=y + " (log)"),
        y2=alt.Y2(datum=floor),
        color=alt.Color("source:N", scale=alt.Scale(domain=["predicted", "measured"], range=["#4c78a8", "#f58518"]),
                        legend=alt.Legend(orient="top")),
        opacity=alt.condition(sel, alt.value(1.0), alt.value(0.4)),
        tooltip=["kernel", "source", alt.Tooltip(f"{y}:Q", format=",.3f")],
    ).add_params(sel)
    if refs and y != "DRAM TB/s" and (flops or not as_gflops):
        r = pd.DataFrame([{"y": flops / ref.time_ns if as_gflops else ref.time_ns / 1e6, "name": ref.name,
                           "how": ref.how} for ref in refs])
        rule = alt.Chart(r).encode(y="y:Q")
        chart = chart + rule.mark_rule(strokeDash=[5, 3], color="#54a24b").encode(
            tooltip=["name", "how", alt.Tooltip("y:Q", title=f"measured {y}", format=",.3f")]) + rule.mark_text(
            align="left", dx=4, dy=-6, color="#54a24b").encode(text="name:N", x=alt.value(0))
    return chart.properties(height=420)


def roofline(pts: list[rl.Point], cfg) -> alt.Chart | None:
    """The hierarchical roofline: compute roofs at the clock their pipe holds, HBM / L2 / L1-shared ceilings, each
    kernel's FLOP/s at its intensity against each level's bytes (one colour per kernel, one shape per level;
    predicted filled, measured hollow)."""
    if not pts:
        return None
    p = pd.DataFrame([{"kernel": x.kernel, "level": x.level, "source": x.source, "FLOP/byte": x.intensity,
                       "TFLOP/s": x.flops_per_second / 1e12} for x in pts])
    tensor = p["TFLOP/s"].max() * 1e12 > rl.ceilings(cfg, tensor=False)[0].value * 1.0001
    cs = rl.ceilings(cfg, tensor=tensor)
    lo, hi = max(p["FLOP/byte"].min() / 4, 0.01), p["FLOP/byte"].max() * 4
    top = max(c.value for c in cs if c.kind == "compute")
    grid = [lo * (hi / lo) ** (i / 80) for i in range(81)]
    lines = []
    for c in cs:
        label = (f"{c.name} {c.value / 1e12:,.0f} TFLOP/s at {c.note}" if c.kind == "compute"
                 else f"{c.name} {c.value / 1e12:.2f} TB/s ({c.note})")
        for x in grid:
            y = c.value if c.kind == "compute" else min(c.value * x, top)
            lines.append({"ceiling": label, "FLOP/byte": x, "TFLOP/s": y / 1e12})
    lines = pd.DataFrame(lines)
    roof = alt.Chart(lines).mark_line().encode(
        x=alt.X("FLOP/byte:Q", scale=alt.Scale(type="log", domain=[lo, hi]),
                title="arithmetic intensity (FLOP per byte moved at that level)"),
        y=alt.Y("TFLOP/s:Q", scale=alt.Scale(type="log"), title="achieved TFLOP/s"),
        strokeDash=alt.StrokeDash("ceiling:N", legend=alt.Legend(title="roofs and ceilings", orient="bottom",
                                                                 columns=2, labelLimit=400)),
        color=alt.value("#555"))
    kernels = list(dict.fromkeys(p["kernel"]))
    # sixteen hues no two alike (Tableau 10, then darker hues none of them repeats)
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
               "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#000000"]
    dots = alt.Chart(p).mark_point(size=80).encode(
        x="FLOP/byte:Q", y="TFLOP/s:Q",
        shape=alt.Shape("level:N", scale=alt.Scale(domain=list(rl.LEVELS), range=["circle", "square", "triangle-up"]),
                        legend=None),  # the caption beside the chart names the shapes (a shape legend here
        # drew its symbols without a colour: the colour belongs to the kernels' legend)
        color=alt.Color("kernel:N", sort=kernels, scale=alt.Scale(domain=kernels, range=palette[:len(kernels)]
                                                                  if len(kernels) <= len(palette) else None),
                        legend=alt.Legend(orient="right", labelLimit=300)),
        fill=alt.condition(alt.datum.source == "predicted",
                           alt.Color("kernel:N", sort=kernels, legend=None,
                                     scale=alt.Scale(domain=kernels, range=palette[:len(kernels)]
                                                     if len(kernels) <= len(palette) else None)),
                           alt.value("white")),
        tooltip=["kernel", "source", "level", alt.Tooltip("FLOP/byte:Q", format=".3g"),
                 alt.Tooltip("TFLOP/s:Q", format=",.2f")])
    return alt.layer(roof, dots).resolve_scale(color="independent", shape="independent").properties(height=480)


def main() -> None:
    fams = catalog.families()
    c1, c2, c3 = st.columns([2, 2, 1])
    with c1:
        fam = st.selectbox("ladder", fams, format_func=lambda f: LABELS.get(f, f), key="ld_family")
    names = catalog.kernels(fam)
    cfg_path = common.config_path()
    cfg = catalog.config(cfg_path)
    measured, refs = common.measurements(cfg_path)
    square = any(n.startswith(SQUARE_PREFIXES) for n in names)  # memory-bound: one element count per ladder
    if square:  # a transpose's side N stands for N x N elements: the ladder's shape is the element count
        count: dict[tuple[int, ...], int] = {}
        for kernel, s_, params in measured:
            if kernel in names and not params and len(s_) == 1:
                e = (s_[0] ** 2,) if kernel.startswith(SQUARE_PREFIXES) else s_
                count[e] = count.get(e, 0) + 1
        shapes = sorted(count, key=lambda e: (-count[e], -e[0]))
    else:
        shapes = ladder.measured_shapes(measured, names)
    default = catalog.default_shape(names[0])
    if default not in shapes:
        shapes.append(default)
    with c2:
        shape = st.selectbox("shape" + (" (elements; the transposes at sqrt x sqrt)" if square else ""), shapes,
                             format_func=lambda s: " x ".join(map(str, s)), key=f"ld_{fam}_shape")
    with c3:
        rate = "DRAM TB/s" if square else "GFLOP/s"
        y = rate if st.toggle(rate, key=f"ld_{fam}_rate", help=f"bars in {rate} instead of time") else "time (ms)"

    def at(n: str) -> tuple[int, ...]:
        return rung_shape(n, shape)

    if not any(ladder.lookup(measured, n, at(n)) for n in names):
        st.info(f"No measurements of these kernels at this shape on the {cfg.gpu_model} "
                f"(validate/measurements/{cfg.gpu_model.lower()}/): predictions only.")
    common.warn_unvalidated(names[0])
    results = common.sweep([(n, at(n), {}) for n in names], f"the {fam} ladder")
    rows, preds, pts = [], {}, []
    for n, (m, err) in zip(names, results, strict=True):
        meas = ladder.lookup(measured, n, at(n))
        flops = flops_of(n, at(n))
        row = {"kernel": n, "shape": " x ".join(map(str, at(n) * (2 if n.startswith(SQUARE_PREFIXES) else 1))),
               "error": err}
        if m:
            preds[n] = m
            pts += rl.points(n, m, flops or 0, cfg)
            if meas:
                pts += rl.points(n, ladder.measured_metrics(meas), flops or 0, cfg, "measured")
            t = m[TIME]
            row.update({"predicted time (ms)": t / 1e6, "predicted GFLOP/s": m["gpusim__gflops"],
                        "predicted DRAM TB/s": ladder.dram_bytes(m) / t / 1e3,
                        "predicted intensity": flops / ladder.dram_bytes(m) if flops and ladder.dram_bytes(m) else None,
                        "verdict": m["gpusim__verdict"]})
        if meas:
            row.update({"measured time (ms)": meas.time_ns / 1e6,
                        "measured GFLOP/s": flops / meas.time_ns if flops else None,
                        "measured DRAM TB/s": ladder.dram_bytes(meas.ncu) / meas.time_ns / 1e3
                        if ladder.dram_bytes(meas.ncu) else None,
                        "measured intensity": flops / ladder.dram_bytes(meas.ncu)
                        if flops and ladder.dram_bytes(meas.ncu) else None})
            if m:
                row["error %"] = 100 * (m[TIME] - meas.time_ns) / meas.time_ns
        rows.append(row)
    df = pd.DataFrame(rows)
    for col in ("predicted time (ms)", "measured time (ms)", "predicted GFLOP/s", "measured GFLOP/s",
                "predicted DRAM TB/s", "measured DRAM TB/s", "predicted intensity", "measured intensity", "error %",
                "verdict"):
        if col not in df:
            df[col] = None
    bad = df[df["error"] != ""]
    for _, r in bad.iterrows():
        st.warning(f"{r['kernel']}: {r['error']}")

    st.subheader("Predicted beside measured", divider="gray")
    left, right = st.columns([3, 1])
    with left:
        key = "ld_chart"
        st.altair_chart(bars(df, names, ladder.references(refs, fam, shape), y, flops_of(names[0], at(names[0]))),
                        key=key,
                        on_select=lambda: pick_rung(key), selection_mode="rung", width="stretch")
    with right:
        st.markdown("Blue: the simulator's prediction; orange: the median of the timed runs on an H100 SXM (CUDA "
                    "events). The dashed green line is the library baseline measured on the same GPU (cuBLAS, or "
                    "PyTorch's FlashAttention). The axis is logarithmic: one grid step is a factor of ten.")
        st.caption("Click a bar to explain that rung below.")
    st.subheader("Roofline", divider="gray")
    left, right = st.columns([3, 1])
    with left:
        chart = roofline(pts, cfg)
        if chart is not None:
            st.altair_chart(chart, width="stretch")
        else:
            st.info("These kernels declare no FLOPs: a roofline (FLOP/s against FLOP per byte) has nothing to show.")
    with right:
        st.markdown("Each kernel is drawn three times, at the same FLOP/s: its FLOPs per byte moved to and from "
                    "HBM (circle), through the L2 (square) and through L1 and shared memory (triangle). Each level "
                    "has its ceiling (a slanted line: its bandwidth times the intensity); the flat lines are the "
                    "pipes' peaks at the clock each pipe holds when saturated. The ceiling nearest above a point is "
                    "the level that limits it. Filled: predicted; hollow: measured (ncu's counters and the "
                    "CUDA-event time).")

    st.subheader("Why is a rung faster than the one below?", divider="gray")
    choices = names[1:]
    if not choices:
        st.info("This ladder has one rung.")
        return
    if st.session_state.get("ld_rung") not in choices:
        st.session_state["ld_rung"] = choices[0]
    rung = st.selectbox("rung", choices, key="ld_rung")
    below = names[names.index(rung) - 1]
    st.caption(f"**{rung}**: {catalog.registry()[rung].doc}  \n**{below}** (the rung below): "
               f"{catalog.registry()[below].doc}")
    if rung not in preds or below not in preds:
        st.info("No prediction for one of the two rungs (see the warnings above).")
        return
    a, b = ladder.lookup(measured, below, at(below)), ladder.lookup(measured, rung, at(rung))
    why = ladder.why_faster(below, preds[below], rung, preds[rung], cfg,
                            ladder.measured_metrics(a) if a and b else None,
                            ladder.measured_metrics(b) if a and b else None)
    st.markdown(why.headline)
    if not (a and b):
        st.caption("Not measured at this shape: predicted only.")
    left, right = st.columns(2)
    with left:
        st.markdown("**Where the time went**: each unit's busy time (its work at its peak) in both rungs, and its "
                    "change as a share of the change of the kernel's time")
        st.dataframe(units_table(why), hide_index=True, width="stretch")
    with right:
        st.markdown(f"**What moved**: every counter that changed by {ladder_moves_ratio()}x or more, predicted and "
                    "measured")
        st.dataframe(moves_table(why), hide_index=True, width="stretch")
    st.caption(f"Verdict, {rung}: {preds[rung]['gpusim__verdict']}  \nVerdict, {below}: "
               f"{preds[below]['gpusim__verdict']}")
    with st.expander("All rungs as a table"):
        st.dataframe(df.drop(columns=["error"]), hide_index=True, width="stretch")


def ladder_moves_ratio() -> str:
    from gpusim.bottleneck import MOVE_RATIO

    return f"{MOVE_RATIO:g}"


def _ms(ns: float | None) -> str:
    return "-" if ns is None else common.fmt_time(ns)


def units_table(why) -> pd.DataFrame:
    return pd.DataFrame([{"unit": d.unit, "busy, below": _ms(d.before_ns), "busy, this rung": _ms(d.after_ns),
                          "share, predicted": f"{d.share_pct:.0f}%",
                          "share, measured": "-" if d.measured_share_pct is None else f"{d.measured_share_pct:.0f}%",
                          "agree": {None: "-", True: "yes", False: "no"}[d.agrees]}
                         for d in why.units if abs(d.share_pct) >= 1 or (d.measured_share_pct or 0) >= 1])


def _v(x: float | None) -> str:
    if x is None:
        return "-"
    if abs(x) >= 1e4:
        return f"{x:.3g}"
    return f"{x:,.2f}"


def _f(x: float | None) -> str:
    if x is None:
        return "-"
    if x == math.inf:
        return "from 0"
    if x == 0:
        return "to 0"
    return f"{x:.2f}x" if x >= 1 else f"{1 / x:.2f}x less"


def moves_table(why) -> pd.DataFrame:
    return pd.DataFrame([{"metric": m.label, "below": _v(m.before), "this rung": _v(m.after),
                          "change": _f(m.factor), "measured below": _v(m.measured_before),
                          "measured this rung": _v(m.measured_after), "measured change": _f(m.measured_factor),
                          "agree": {None: "-", True: "yes", False: "no"}[m.agrees]} for m in why.moves],
                        columns=["metric", "below", "this rung", "change", "measured below", "measured this rung",
                                 "measured change", "agree"])


main()
