"""Pipeline lab: a kernel with stages; its simulated SM timeline, time against stages, shared memory."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from gpusim.app import catalog, ladder, pipeline, timeline
from gpusim.app.pages import common
from gpusim.ncu import TIME

WINDOW_ITERATIONS = 6  # loop iterations the timeline shows at first
COLORS = {"global memory": "#4c78a8", "TMA": "#72b7b2", "shared memory": "#9ecae9", "MMA (tensor cores)": "#e45756",
          "softmax (SFU)": "#f58518", "FP32 / INT32": "#eeca3b", "barrier / async wait": "#b279a2",
          "stall": "#d3d3d3", timeline.EXTRAPOLATED: "#f0f0f0"}

st.title("Pipeline lab")
st.markdown(
    "A GEMM or attention kernel loads a tile of its inputs into shared memory, computes on it, and moves on. "
    "With **one stage** the math waits for every load. With **S stages** the kernel keeps S-1 tiles in flight "
    "(cp.async on Ampere, TMA on Hopper) while it computes on the oldest one, so memory latency hides behind "
    "math. Each stage costs a tile's worth of shared memory, and an SM has only 227 KB for one block: more "
    "stages can mean fewer resident CTAs, or no launch at all.")


def gantt(view: dict, window: tuple[float, float]) -> alt.Chart:
    df = pd.DataFrame(view["bars"])
    df = df[(df["end"] > window[0]) & (df["start"] < window[1])]
    order = list(dict.fromkeys(df.sort_values("order")["row"]))
    acts = [a for a in timeline.ACTIVITIES if a in set(df["activity"])] + sorted(
        set(df["activity"]) - set(timeline.ACTIVITIES))
    return alt.Chart(df).mark_bar(clip=True).encode(
        x=alt.X("start:Q", title="cycle (one SM, first wave)", scale=alt.Scale(domain=list(window))), x2="end:Q",
        y=alt.Y("row:N", sort=order, title=None),
        yOffset=alt.YOffset("activity:N", sort=acts),
        color=alt.Color("activity:N", sort=acts,
                        scale=alt.Scale(domain=acts, range=[COLORS.get(a, "#888888") for a in acts])),
        tooltip=["row", "activity", "ops", alt.Tooltip("start:Q", format=",.0f"), alt.Tooltip("end:Q", format=",.0f"),
                 alt.Tooltip("count:Q", title="spans merged")],
    ).properties(height=max(320, 80 * len(order))).interactive(bind_y=False)


def stage_charts(points: list[pipeline.StagePoint], times: dict[int, float], measured: dict[int, float], chosen: int,
                 limit_kb: float):
    df = pd.DataFrame([{"stages": p.stages, "smem (KB)": (p.smem_bytes or 0) / 1024, "fits": p.fits,
                        "CTAs/SM": p.ctas_per_sm, "label": f"{p.ctas_per_sm} CTA/SM" if p.fits else "no fit",
                        "chosen": p.stages == chosen, "time (ms)": times.get(p.stages)} for p in points])
    t = df.dropna(subset=["time (ms)"])
    line = alt.Chart(t).mark_line(point=False, color="#4c78a8").encode(
        x=alt.X("stages:O", scale=alt.Scale(domain=[p.stages for p in points]), axis=alt.Axis(labelAngle=0)),
        y=alt.Y("time (ms):Q", title="time (ms)"))
    dots = alt.Chart(t).mark_circle(size=120).encode(
        x=alt.X("stages:O", scale=alt.Scale(domain=[p.stages for p in points])), y="time (ms):Q",
        color=alt.condition("datum.chosen", alt.value("#e4572e"), alt.value("#4c78a8")),
        tooltip=["stages", alt.Tooltip("time (ms):Q", format=".4f"), "CTAs/SM"])
    time_chart = line + dots
    if measured:
        m = pd.DataFrame([{"stages": s, "measured (ms)": t} for s, t in measured.items()])
        time_chart += alt.Chart(m).mark_point(shape="square", size=110, filled=True, color="#f58518").encode(
            x=alt.X("stages:O", scale=alt.Scale(domain=[p.stages for p in points])),
            y=alt.Y("measured (ms):Q", title="time (ms)"),
            tooltip=["stages", alt.Tooltip("measured (ms):Q", format=".4f")])
    time_chart = time_chart.properties(height=260)
    bars = alt.Chart(df).mark_bar().encode(
        x=alt.X("stages:O", axis=alt.Axis(labelAngle=0)), y=alt.Y("smem (KB):Q", title="shared memory per CTA (KB)"),
        color=alt.condition("datum.fits", alt.value("#54a24b"), alt.value("#e45756")),
        opacity=alt.condition("datum.chosen", alt.value(1.0), alt.value(0.6)),
        tooltip=["stages", alt.Tooltip("smem (KB):Q", format=".1f"), "CTAs/SM"])
    labels = alt.Chart(df).mark_text(dy=-6).encode(x="stages:O", y="smem (KB):Q", text="label")
    rule = alt.Chart(pd.DataFrame({"y": [limit_kb], "t": [f"{limit_kb:.0f} KB per block"]}))
    limit = rule.mark_rule(color="#e45756", strokeDash=[6, 3]).encode(y="y:Q") + rule.mark_text(
        align="left", dx=4, dy=-6, color="#e45756").encode(y="y:Q", text="t:N", x=alt.value(0))
    return time_chart, (bars + labels + limit).properties(height=260)


def main() -> None:
    common.user_kernels("pl")
    names = catalog.kernels_with("stages")
    if not names:
        st.info("No registered kernel has a `stages` knob yet. The cp.async GEMM (`hgemm_mma_pipelined`), the "
                "warp-specialized Hopper GEMM (`hgemm_ws`) and FlashAttention (`fa2`, `fa3`) bring one; this page "
                "lists every kernel that declares it.")
        return
    top = st.columns([2, 2, 3])
    with top[0]:
        pipelined = [n for n in names if int(catalog.registry()[n].defaults["stages"]) > 1]
        start = names.index(pipelined[0]) if pipelined else 0
        name = st.selectbox("kernel", names, index=start, key="pl_kernel")
        st.caption(catalog.registry()[name].doc)
    with top[1]:
        shape = common.shape_input(name, "pl")
    values = pipeline.stage_values(name)
    default = int(catalog.registry()[name].defaults["stages"])
    with top[2]:
        stages = st.slider("stages", min(values), max(values), value=default, key=f"pl_{name}_stages",
                           help="tiles in the shared-memory ring: S-1 in flight while one is computed on")
    with st.expander("other knobs"):
        overrides = common.knob_widgets(name, "pl", skip=("stages",))
    if shape is None:
        return
    common.warn_unvalidated(name)
    cfg = catalog.config(common.config_path())
    points = pipeline.smem_sweep(name, shape, overrides, cfg)
    if not any(p.smem_bytes is not None for p in points):
        st.error(f"**{name} cannot run this input:** {points[0].error}")
        return
    fitting = [p for p in points if p.fits]
    results = dict(zip([p.stages for p in fitting],
                       common.sweep([(name, shape, {**overrides, "stages": p.stages}) for p in fitting],
                                    f"{name} at stages {fitting[0].stages}..{fitting[-1].stages}" if fitting else name,
                                    traced=True), strict=True))
    times = {s: r["metrics"][TIME] / 1e6 for s, r in results.items() if r["metrics"]}
    chosen = next(p for p in points if p.stages == stages)
    res = results.get(stages)
    m1, m2, m3, m4 = st.columns(4)
    if not chosen.fits or res is None or not res["metrics"]:
        why = chosen.error or (res or {}).get("error", "")
        most = pipeline.max_stages(points)
        m1.metric("predicted time", "does not fit")
        st.error(f"**{stages} stages do not fit:** {why}. "
                 + (f"The most that fits is {most} stages." if most else "No stage count fits."))
    else:
        t = res["metrics"][TIME]
        fewest = min(times) if times else stages
        delta = f"{(t / 1e6 / times[fewest] - 1) * 100:+.0f}% vs {fewest} stage(s)" if stages != fewest else None
        m1.metric("predicted time", common.fmt_time(t), delta=delta, delta_color="inverse")
    m2.metric("shared memory per CTA", f"{(chosen.smem_bytes or 0) / 1024:.1f} KB",
              help=f"limit per block: {cfg.sm.smem_per_block_max_bytes / 1024:.0f} KB")
    m3.metric("CTAs per SM", chosen.ctas_per_sm, help=f"limited by {chosen.limiter}" if chosen.limiter else None)
    m4.metric("warps per SM", chosen.warps_per_sm, help=f"of {cfg.sm.max_warps_per_sm}")

    if res is not None and res["metrics"]:
        st.subheader(f"One SM's timeline at {stages} stage{'s' if stages != 1 else ''}", divider="gray")
        left, right = st.columns([3, 1])
        with right:
            per_wg = st.radio("rows", ["per warp", "per warpgroup"], key="pl_rows",
                              index=1 if res["warps_per_cta"] >= 8 else 0,
                              help="per warpgroup: the first warp of each group of four (a warpgroup runs wgmma "
                                   "together; producer and consumer roles are per warpgroup)") == "per warpgroup"
            view = res["views"][per_wg]
            st.markdown(
                "Each row is a warp (or warpgroup); each colour an activity. Loads and TMA copies are drawn from "
                "issue to arrival, so they overlap the math when the pipeline works. **Barrier / async wait** is "
                "time a warp waits for a stage to fill (or to be freed); **stall** is waiting on a dependency. "
                "Scroll on the chart to zoom in time, drag to pan.")
            if res["busy"]:
                skipped = res.get("extrapolated", 0.0)
                st.caption("Share of the simulated warp time (each instant counted once: math before the loads in "
                           "flight that it overlaps, waits last; the shares add up to 100%): "
                           + ", ".join(f"{k} {v:.1f}%" for k, v in res["busy"].items())
                           + (f". The other {skipped:.1f}% of the warps' time was extrapolated from the simulated "
                              "iterations (drawn pale), not simulated." if skipped else ""))
            if view["shown"] < view["end"]:
                st.caption(f"Showing the first {view['shown']:,.0f} of {view['end']:,.0f} cycles of the timeline.")
            if res["fast_forward"]:
                st.caption(f"The simulator ran {res['iterations']} loop iterations and extrapolated the rest "
                           "(steady state).")
        with left:
            if view["bars"]:
                shown = max(1, int(view["shown"]))
                # a few loop iterations at first: enough to see the pipeline's rhythm
                first = min(shown, int(WINDOW_ITERATIONS * view["end"] / max(res["iterations"], 1)))
                window = st.slider("cycles shown", 0, shown, (0, first), step=max(1, shown // 500),
                                   key=f"pl_{name}_{stages}_{per_wg}_window")
                st.altair_chart(gantt(view, window), width="stretch")
            else:
                st.info("The simulation recorded no timeline for this launch.")

    st.subheader("Stages: time and shared memory", divider="gray")
    limit_kb = cfg.sm.smem_per_block_max_bytes / 1024
    meas_db, _ = common.measurements(common.config_path())
    measured = {p.stages: m.time_ns / 1e6 for p in points
                if (m := ladder.lookup(meas_db, name, shape, {**overrides, "stages": p.stages}))}
    time_chart, smem_chart = stage_charts(points, times, measured, stages, limit_kb)
    left, right = st.columns(2)
    with left:
        st.altair_chart(time_chart, width="stretch")
        st.caption("Predicted time against stages (red: the chosen one"
                   + ("; orange squares: measured on the H100" if measured else "") + "). The first extra stage hides "
                   "most of the load latency; after that the curve flattens, or rises when occupancy drops.")
    with right:
        st.altair_chart(smem_chart, width="stretch")
        st.caption(f"Shared memory per CTA grows linearly with stages; the dashed line is the {limit_kb:.0f} KB one "
                   "block may use. Labels give the CTAs that fit on one SM: fewer CTAs mean fewer warps to hide "
                   "latency.")
    no_fit = [p for p in points if not p.fits]
    if no_fit:
        st.caption("Not launchable: " + "; ".join(f"{p.stages} stages ({p.error})" for p in no_fit[:3])
                   + (" ..." if len(no_fit) > 3 else ""))


main()
