"""Ladder: every rung of a ladder, predicted beside measured, as bars and on a roofline; why a rung is faster."""

from __future__ import annotations

import math

import altair as alt
import pandas as pd
import streamlit as st

from gpusim.app import catalog, ladder
from gpusim.app.pages import common

TIME = "gpu__time_duration.sum"
MOVE_COLUMNS = {"below": st.column_config.NumberColumn(format="compact"),
                "this rung": st.column_config.NumberColumn(format="compact")}
ROOFS = {"sgemm": ("FP32 FFMA peak", "HBM"),
         None: ("tensor (wgmma) peak", "tensor (mma.sync) measured", "HBM")}
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


def bars(df: pd.DataFrame, order: list[str], refs: list[ladder.Reference], as_gflops: bool,
         flops: int | None) -> alt.Chart:
    y = "GFLOP/s" if as_gflops else "time (ms)"
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
    if refs and (flops or not as_gflops):
        r = pd.DataFrame([{"y": flops / ref.time_ns if as_gflops else ref.time_ns / 1e6, "name": ref.name,
                           "how": ref.how} for ref in refs])
        rule = alt.Chart(r).encode(y="y:Q")
        chart = chart + rule.mark_rule(strokeDash=[5, 3], color="#54a24b").encode(
            tooltip=["name", "how", alt.Tooltip("y:Q", title=f"measured {y}", format=",.3f")]) + rule.mark_text(
            align="left", dx=4, dy=-6, color="#54a24b").encode(text="name:N", x=alt.value(0))
    return chart.properties(height=420)


def roofline(df: pd.DataFrame, roofs: dict[str, float]) -> alt.Chart:
    pts = []
    for _, r in df.iterrows():
        for src in ("predicted", "measured"):
            ai, gf = r.get(f"{src} intensity"), r.get(f"{src} GFLOP/s")
            if pd.notna(ai) and pd.notna(gf) and ai > 0:
                pts.append({"kernel": r["kernel"], "source": src, "FLOP/byte": ai, "GFLOP/s": gf})
    p = pd.DataFrame(pts)
    if p.empty:
        return None
    lo, hi = max(p["FLOP/byte"].min() / 4, 0.01), p["FLOP/byte"].max() * 8
    grid = [lo * (hi / lo) ** (i / 60) for i in range(61)]
    bw = roofs["HBM"]
    lines = []
    for name, peak in roofs.items():
        if name == "HBM":
            continue
        lines += [{"roof": name, "FLOP/byte": x, "GFLOP/s": min(peak, bw * x) / 1e9} for x in grid]
    roof = alt.Chart(pd.DataFrame(lines)).mark_line(strokeDash=[4, 2]).encode(
        x=alt.X("FLOP/byte:Q", scale=alt.Scale(type="log"), title="arithmetic intensity (FLOP per DRAM byte)"),
        y=alt.Y("GFLOP/s:Q", scale=alt.Scale(type="log")),
        color=alt.Color("roof:N", scale=alt.Scale(scheme="greys")))
    dots = alt.Chart(p).mark_point(size=90, filled=True).encode(
        x="FLOP/byte:Q", y="GFLOP/s:Q",
        shape=alt.Shape("source:N", scale=alt.Scale(domain=["predicted", "measured"], range=["circle", "square"])),
        color=alt.Color("kernel:N", sort=list(p["kernel"].unique())),
        tooltip=["kernel", "source", alt.Tooltip("FLOP/byte:Q", format=".2f"), alt.Tooltip("GFLOP/s:Q", format=",.0f")])
    return alt.layer(roof, dots).resolve_scale(color="independent", shape="independent").properties(height=420)


def main() -> None:
    fams = catalog.families()
    c1, c2, c3 = st.columns([2, 2, 1])
    with c1:
        fam = st.selectbox("ladder", fams, format_func=lambda f: LABELS.get(f, f), key="ld_family")
    names = catalog.kernels(fam)
    cfg_path = common.config_path()
    cfg = catalog.config(cfg_path)
    measured, refs = common.measurements(cfg_path)
    shapes = ladder.measured_shapes(measured, names)
    default = catalog.default_shape(names[0])
    if default not in shapes:
        shapes.append(default)
    with c2:
        shape = st.selectbox("shape", shapes, format_func=lambda s: " x ".join(map(str, s)), key=f"ld_{fam}_shape")
    with c3:
        as_gflops = st.toggle("GFLOP/s", key="ld_gflops", help="bars in GFLOP/s instead of time")
    if not any(ladder.lookup(measured, n, shape) for n in names):
        st.info(f"No measurements of these kernels at this shape on the {cfg.gpu_model} "
                f"(validate/measurements/{cfg.gpu_model.lower()}/): predictions only.")
    results = common.sweep([(n, shape, {}) for n in names], f"the {fam} ladder")
    rows, preds = [], {}
    for n, (m, err) in zip(names, results, strict=True):
        meas = ladder.lookup(measured, n, shape)
        flops = flops_of(n, shape)
        row = {"kernel": n, "error": err}
        if m:
            preds[n] = m
            t = m[TIME]
            row.update({"predicted time (ms)": t / 1e6, "predicted GFLOP/s": m["gpusim__gflops"],
                        "predicted intensity": flops / ladder.dram_bytes(m) if flops and ladder.dram_bytes(m) else None,
                        "verdict": m["gpusim__verdict"]})
        if meas:
            row.update({"measured time (ms)": meas.time_ns / 1e6,
                        "measured GFLOP/s": flops / meas.time_ns if flops else None,
                        "measured intensity": flops / ladder.dram_bytes(meas.ncu)
                        if flops and ladder.dram_bytes(meas.ncu) else None})
            if m:
                row["error %"] = 100 * (m[TIME] - meas.time_ns) / meas.time_ns
        rows.append(row)
    df = pd.DataFrame(rows)
    for col in ("predicted time (ms)", "measured time (ms)", "predicted GFLOP/s", "measured GFLOP/s",
                "predicted intensity", "measured intensity", "error %", "verdict"):
        if col not in df:
            df[col] = None
    bad = df[df["error"] != ""]
    for _, r in bad.iterrows():
        st.warning(f"{r['kernel']}: {r['error']}")

    st.subheader("Predicted beside measured", divider="gray")
    left, right = st.columns([3, 1])
    with left:
        key = "ld_chart"
        st.altair_chart(bars(df, names, ladder.references(refs, fam, shape), as_gflops, flops_of(names[0], shape)),
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
        chart = roofline(df, {k: v for k, v in ladder.roofs(cfg).items() if k in ROOFS.get(fam, ROOFS[None])})
        if chart is not None:
            st.altair_chart(chart, width="stretch")
    with right:
        st.markdown("Arithmetic intensity is FLOPs per byte moved to or from HBM. A kernel under the slanted line "
                    "is limited by HBM bandwidth, under a flat line by that pipe's peak. Moving right means more "
                    "reuse of each byte fetched; moving up means closer to the roof. Circles: predicted; squares: "
                    "measured (ncu's DRAM bytes).")

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
    pl, ml = st.columns(2)
    with pl:
        st.markdown("**Predicted**")
        if rung in preds and below in preds:
            why = ladder.why_faster(below, preds[below], rung, preds[rung])
            st.markdown(why.headline)
            st.dataframe(moves_table(why), hide_index=True, width="stretch", column_config=MOVE_COLUMNS)
            st.caption(f"Verdict: {preds[rung]['gpusim__verdict']}")
        else:
            st.info("No prediction for one of the two rungs (see the warnings above).")
    with ml:
        st.markdown("**Measured (ncu)**")
        a, b = ladder.lookup(measured, below, shape), ladder.lookup(measured, rung, shape)
        if a and b:
            why = ladder.why_faster(below, {**a.ncu, TIME: a.time_ns}, rung, {**b.ncu, TIME: b.time_ns})
            st.markdown(why.headline)
            st.dataframe(moves_table(why), hide_index=True, width="stretch", column_config=MOVE_COLUMNS)
        else:
            st.info("Not measured at this shape.")
    with st.expander("All rungs as a table"):
        st.dataframe(df.drop(columns=["error"]), hide_index=True, width="stretch")


def moves_table(why: ladder.Why) -> pd.DataFrame:
    return pd.DataFrame([{"metric": m.label, "below": m.before, "this rung": m.after,
                          "change": f"{m.after / m.before:.2f}x" if m.before else "from 0",
                          "helps": "yes" if m.improved else "no"} for m in why.moves[:6]])


main()
