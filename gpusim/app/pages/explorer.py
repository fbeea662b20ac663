"""Kernel explorer: any registered kernel, shape and knobs; the ncu-named metrics, stalls, verdict, trace."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from gpusim.app import catalog
from gpusim.app.pages import common
from gpusim.cli import dram_gbytes_per_s
from gpusim.metrics import HEADLINE, STALL_METRIC

TIME = "gpu__time_duration.sum"
STALL_HELP = {
    "long_scoreboard": "waiting for a global (L1TEX) load",
    "short_scoreboard": "waiting for a shared-memory load or an MUFU result",
    "lg_throttle": "the local/global load queue is full",
    "mio_throttle": "the shared-memory / MIO queue is full",
    "barrier": "waiting at __syncthreads for the other warps",
    "wait": "a fixed-latency dependency (e.g. FFMA after FFMA)",
    "math_pipe_throttle": "the math pipe is busy",
    "not_selected": "ready, but another warp was issued",
    "selected": "issuing",
}

st.title("Kernel explorer")
st.markdown("Any registered kernel, any shape and knob: the prediction in Nsight Compute's vocabulary, where the "
            "warps wait, what limits the kernel, and the timeline of one SM to open in Perfetto.")


def main() -> None:
    common.user_kernels("ex")
    reg = catalog.registry()
    top = st.columns([2, 2])
    with top[0]:
        name = st.selectbox("kernel", list(reg), key="ex_kernel", format_func=lambda n: f"{reg[n].family} / {n}")
        st.caption(reg[name].doc)
    with top[1]:
        shape = common.shape_input(name, "ex")
    overrides = common.knob_widgets(name, "ex")
    with st.expander("launch resources (as ptxas -v reports them)"):
        l1, l2 = st.columns(2)
        regs = int(l1.number_input("registers per thread (0: the kernel's own)", 0, 255, 0, key=f"ex_{name}_regs"))
        smem = int(l2.number_input("shared memory per block, bytes (0: the kernel's own)", 0, 1 << 20, 0, step=1024,
                                   key=f"ex_{name}_smem"))
        if regs:
            overrides["regs_per_thread"] = regs
        if smem:
            overrides["smem_bytes"] = smem
    if shape is None:
        return
    with st.spinner("simulating..."):
        m, err = common.metrics_of(name, shape, common.frozen(overrides), common.config_path())
    if m is None:
        st.error(f"**No prediction:** {err}")
        return
    c = st.columns(4)
    c[0].metric("predicted time", common.fmt_time(m[TIME]))
    if m["gpusim__gflops"]:
        c[1].metric("GFLOP/s", f"{m['gpusim__gflops']:,.0f}")
    else:  # a kernel that declares no FLOPs: DRAM bytes over time
        c[1].metric("DRAM GB/s", f"{dram_gbytes_per_s(m):,.0f}")
    c[2].metric("achieved occupancy", f"{m['sm__warps_active.avg.pct_of_peak_sustained_active']:.0f}%",
                help=f"{m['gpusim__ctas_per_sm']} CTA(s) per SM, limited by {m['gpusim__occupancy_limiter']}")
    c[3].metric("waves", f"{m['gpusim__waves']:.2f}", help="CTAs / (SMs x CTAs per SM)")
    st.info(f"**Verdict:** {m['gpusim__verdict']}")
    st.caption(f"Predicted for the {catalog.config(common.config_path()).name}, shape {' x '.join(map(str, shape))}"
               + (f", knobs {overrides}" if overrides else "") + ".")
    if m.get("gpusim__fast_forward"):
        st.caption("Steady-state fast-forward was used: loop iterations and CTA waves beyond the simulated window are "
                   "extrapolated.")
    t1, t2, t3, t4 = st.tabs(["stall breakdown", "utilization", "ncu metrics", "trace"])
    with t1:
        stalls = pd.DataFrame([{"reason": k.split("stalled_")[1].split("_per_issue")[0], "warps per issue": v}
                               for k, v in m.items() if k.startswith(STALL_METRIC.split("{}")[0])])
        stalls = stalls[stalls["warps per issue"] > 0].sort_values("warps per issue", ascending=False)
        left, right = st.columns([3, 2])
        with left:
            st.altair_chart(alt.Chart(stalls).mark_bar().encode(
                x="warps per issue:Q", y=alt.Y("reason:N", sort="-x", title=None),
                tooltip=["reason", alt.Tooltip("warps per issue:Q", format=".3f")]), width="stretch")
        with right:
            st.markdown("For every instruction issued, how many warps were waiting, and for what (ncu's "
                        "`smsp__average_warps_issue_stalled_<reason>_per_issue_active`). The longest bar is where "
                        "the time goes.")
            for r in stalls["reason"].head(3):
                st.markdown(f"- **{r}**: {STALL_HELP.get(r, 'see the Nsight Compute guide')}")
    with t2:
        u = pd.DataFrame([{"resource": k, "% of peak": v} for k, v in m["gpusim__utilization_pct"].items()])
        left, right = st.columns([3, 2])
        with left:
            st.altair_chart(alt.Chart(u).mark_bar().encode(
                x=alt.X("% of peak:Q", scale=alt.Scale(domain=[0, 100])), y=alt.Y("resource:N", sort="-x", title=None),
                tooltip=["resource", "% of peak"]), width="stretch")
        with right:
            st.markdown("How busy each resource was over the whole kernel. A kernel is *bound* by a resource it "
                        "uses above 60%; when none is that busy, it is *latency-bound*: warps wait and nothing is "
                        "saturated, and more parallelism (occupancy, ILP, pipelining) helps.")
    with t3:
        rows = [{"ncu metric": k, "meaning": HEADLINE.get(k, ""), "value": v} for k, v in m.items()
                if not isinstance(v, dict) and not k.startswith(STALL_METRIC.split("{}")[0])]
        table = pd.DataFrame(rows)
        table["value"] = table["value"].astype(str)
        st.dataframe(table, hide_index=True, width="stretch", height=520)
        st.caption("Names are Nsight Compute's, so a prediction can sit beside an `ncu --metrics` report; "
                   "`gpusim__*` keys have no ncu name.")
    with t4:
        st.markdown("The simulated timeline of one SM (first wave): one track per warp, one slice per operation "
                    "or stall. Open the file in [ui.perfetto.dev](https://ui.perfetto.dev) or chrome://tracing.")
        frozen = common.frozen(overrides)
        cfg_path = common.config_path()
        st.download_button("download Perfetto trace (.json)", key="ex_trace",
                           data=lambda: common.trace_json(name, shape, frozen, cfg_path),
                           file_name=f"{name}_{'x'.join(map(str, shape))}.trace.json", mime="application/json",
                           on_click="ignore", icon=":material/download:")


main()
