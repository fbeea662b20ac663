"""Kernel explorer: any registered kernel, shape and knobs; the ncu-named metrics, stalls, verdict, trace."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from gpusim import bottleneck, sections, stalls
from gpusim import units as u
from gpusim.app import catalog
from gpusim.app.pages import common
from gpusim.ncu import TIME


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
    cfg = catalog.config(common.config_path())
    common.warn_unvalidated(name)
    a = bottleneck.analyze(m, cfg)
    c = st.columns(4)
    c[0].metric("predicted time", common.fmt_time(m[TIME]))
    dram = (m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"]) / (m[TIME] * 1e-9)
    if m["gpusim__gflops"]:
        c[1].metric("throughput", u.flops_per_second(m["gpusim__gflops"] * 1e9),
                    help=f"DRAM {u.bytes_per_second(dram)}")
    else:  # a kernel that declares no FLOPs: DRAM bytes over time
        c[1].metric("DRAM throughput", u.bytes_per_second(dram))
    c[2].metric("achieved occupancy", f"{m['sm__warps_active.avg.pct_of_peak_sustained_active']:.0f}%",
                help=f"{m['gpusim__ctas_per_sm']} CTA(s) per SM, limited by {m['gpusim__occupancy_limiter']}")
    c[3].metric("waves", f"{m['gpusim__waves']:.2f}", help="CTAs / (SMs x CTAs per SM)")
    st.info(f"**Verdict:** {m['gpusim__verdict']}")
    st.caption(f"Predicted for the {catalog.config(common.config_path()).name}, shape {' x '.join(map(str, shape))}"
               + (f", knobs {overrides}" if overrides else "") + ".")
    if m.get("gpusim__fast_forward"):
        st.caption("Steady-state fast-forward was used: loop iterations and CTA waves beyond the simulated window are "
                   "extrapolated.")
    t1, t2, t3, t4 = st.tabs(["speed of light", "warp state", "ncu metrics", "trace"])
    with t1:
        common.sol_panel(m, a)
    with t2:
        rows = [{"reason": r, "warps per issue": v, "what the model's warps waited on": stalls.explain(r, m, top=3)}
                for r, v in bottleneck.stalls(m).items() if v > 0]
        table = pd.DataFrame(rows, columns=["reason", "warps per issue", "what the model's warps waited on"]) \
            .sort_values("warps per issue", ascending=False)
        left, right = st.columns([3, 2])
        with left:
            st.altair_chart(alt.Chart(table).mark_bar().encode(
                x=alt.X("warps per issue:Q", title="warps stalled per instruction issued"),
                y=alt.Y("reason:N", sort="-x", title=None),
                tooltip=["reason", alt.Tooltip("warps per issue:Q", format=".3f")]), width="stretch")
        with right:
            st.markdown("For every instruction issued, how many warps were waiting, and for what (ncu's "
                        "`smsp__average_warps_issue_stalled_<reason>_per_issue_active`). The longest bar is where "
                        "the time goes; the table says which of the kernel's operations each wait was on.")
        st.dataframe(table, hide_index=True, width="stretch",
                     column_config={"warps per issue": st.column_config.NumberColumn(format="%.3f")})
    with t3:
        fm = sections.flat(m)
        rows = [{"section": sections.section_of(k), "ncu metric": k, "unit": sections.unit_of(k),
                 "value": sections.value_text(k, v),
                 "meaning": sections.info(k.split(".")[0] if k.startswith("gpusim__") else k).meaning}
                for k, v in fm.items() if k != "gpusim__verdict"]
        table = pd.DataFrame(rows)
        order = {s: i for i, s in enumerate(sections.SECTIONS)}
        table = table.sort_values("section", key=lambda c: c.map(order), kind="stable")
        st.dataframe(table, hide_index=True, width="stretch", height=520)
        st.caption("Names are Nsight Compute's, so a prediction can sit beside an `ncu --metrics` report; "
                   "`gpusim__*` keys have no ncu name. `gpusim run NAME --shape ... --csv` gives the same table.")
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
