"""Your kernel: a CUDA kernel as it is written (pasted, uploaded or an example) and its launch; the prediction, the
verdict, ncu's sections, each memory instruction of its SASS with its sectors and bank conflicts, one SM's timeline."""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path

import altair as alt
import pandas as pd
import streamlit as st

from gpusim import bottleneck, sections, stalls
from gpusim import units as u
from gpusim.app import catalog, source, timeline
from gpusim.app.pages import common
from gpusim.ncu import TIME

OWN = "your own kernel: paste or upload a .cu file"
DEFAULT_GRID, DEFAULT_BLOCK = "1024", "256"
GLOBAL_LINES, CONFLICT_FREE = "global: 128-B lines", "shared: conflict-free wavefronts"
CONFLICTS = "shared: bank conflicts"
CHART_LINES = 24  # the memory instructions with the most L1/shared pipe cycles in the chart (the table has them all)
PLACEHOLDER = """__global__ void scale(const float* x, float* y, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = s * x[i];
}"""
log = logging.getLogger(__name__)

st.title("Your kernel")
st.markdown("A CUDA kernel as you wrote it: gpusim compiles it for sm_90, emulates its SASS for the CTAs the model "
            "needs and times what each warp executed on the simulated GPU, with no IR to write "
            "(as `gpusim run FILE.cu` does; `docs/your-kernel.md` says what it takes). Pick an example or "
            "paste your own, set the launch, and read the prediction down to each SASS memory instruction.")


# ---- cached steps: compile, emulate, simulate (bad input: one line) -------------------------------------------------
def _guarded(what: str, fn, *args):
    """(fn(*args), "") or (None, the one-line reason): user errors as they are, anything else as a gpusim bug."""
    try:
        return fn(*args), ""
    except catalog.USER_ERRORS as e:
        return None, source.one_line(e)
    except Exception as e:  # the page must not show a stack trace; the log keeps it
        log.exception("front-end failure while %s", what)
        return None, (f"gpusim failed while {what} ({type(e).__name__}: {source.one_line(e)}); this is a gpusim "
                      "bug, the server log has the details")


@st.cache_resource(max_entries=16, show_spinner=False)
def built(path: str, digest: str, defines: tuple[str, ...], compiler: str):
    """The file's kernels, compiled for sm_90 (``digest``: the source's content, so an edit rebuilds)."""
    return _guarded("compiling", source.compile_kernels, path, defines, compiler)


@st.cache_resource(max_entries=8, show_spinner=False)
def emulated(run: source.Run, cfg_path: str):
    kernels, err = built(run.path, run.digest, run.defines, run.compiler)
    if kernels is None:
        return None, err
    return _guarded("emulating", source.emulate, run, kernels, catalog.config(cfg_path))


@st.cache_resource(max_entries=8, show_spinner=False)
def simulated(run: source.Run, cfg_path: str):
    kernel, err = emulated(run, cfg_path)
    if kernel is None:
        return None, err
    return _guarded("simulating", source.simulate, kernel, catalog.config(cfg_path), run.path)


@st.cache_data(max_entries=64, show_spinner=False)
def prediction(run: source.Run, cfg_path: str) -> dict:
    """What the page draws, as plain data: metrics, the SASS lines, the kernel's resources, the timeline."""
    out, err = simulated(run, cfg_path)
    if out is None:
        return {"metrics": None, "error": err}
    kernels, _ = built(run.path, run.digest, run.defines, run.compiler)
    ck = next(k for k in kernels if run.kernel in (k.name, k.mangled))
    res, err = _guarded("reading the SASS lines and the timeline", _summary, run, ck, *out)
    return res if res is not None else {"metrics": None, "error": err}


def _summary(run: source.Run, ck, m: dict, sim) -> dict:
    lines, lost = source.sass_lines(sim, ck.program)
    k = sim.kernel
    trips = k.loop.trips if k.loop is not None else 0
    mem = {x.addr for x in lines}
    wpc = -(-k.launch.threads_per_block // sim.config.sm.warp_size_threads)
    bars, shown, end = timeline.bars(sim.result.trace, wpc)
    return {"metrics": m, "error": "", "lines": source.line_table(lines, trips), "lost": lost,
            "listing": [{"address": f"0x{d.addr:04x}", "SASS": d.text, "memory": d.addr in mem} for d in ck.program],
            "kernel": {"name": k.name, "regs": k.launch.regs_per_thread, "static_smem": ck.static_smem_bytes,
                       "dynamic_smem": run.smem_dynamic, "warps": wpc, "ctas": k.launch.num_ctas, "trips": trips,
                       "notes": k.notes, "ctas_per_sm": sim.occ.ctas_per_sm},
            "timeline": {"bars": [b.__dict__ for b in bars], "shown": shown, "end": end}}


@st.cache_data(max_entries=8, show_spinner=False)
def trace_json(run: source.Run, cfg_path: str) -> bytes:
    """The Perfetto / chrome://tracing file of one SM, as ``gpusim trace`` writes it."""
    from gpusim.trace import chrome_trace

    out, err = simulated(run, cfg_path)
    trace, err = _guarded("writing the trace", chrome_trace, out[1]) if out is not None else (None, err)
    if trace is None:
        return json.dumps({"error": err}).encode()
    return json.dumps(trace, separators=(",", ":")).encode()


# ---- the input: source, kernel, launch ----------------------------------------------------------------------------
def pick_source() -> tuple[str, bytes, source.Example | None] | None:
    """(file name or repository path, its bytes, the example) or None while there is no source yet."""
    choice = st.selectbox("start from", [*source.EXAMPLES, OWN], key="yk_example",
                          help="examples/transpose.cu (docs/authoring.md's transposes) or a validation twin of "
                               "validate/kernels/ at a launch measured on the H100")
    if choice != OWN:
        ex = source.EXAMPLES[choice]
        data = source.read_example(ex)
        st.caption(ex.about)
        with st.expander(f"source: {ex.path}"):
            st.code(data.decode(errors="replace"), language="cpp", line_numbers=True)
        return ex.path, data, ex
    up = st.file_uploader("upload a .cu file", type=["cu"], key="yk_upload")
    text = st.text_area("or paste the source", key="yk_paste", height=240, placeholder=PLACEHOLDER)
    if up is not None:
        return up.name, up.getvalue(), None
    if text.strip():
        return "kernel.cu", text.encode(), None
    st.info("Paste a CUDA kernel (a `__global__` function and what it includes) or upload a `.cu` file; then choose "
            "the kernel and its launch.")
    return None


def _short(message: str, path: str, ex: source.Example | None) -> str:
    """A message about a pasted or uploaded source names the file, not the folder the page wrote it to."""
    return message if ex else message.replace(str(Path(path).parent) + os.sep, "")


def _refill(key: str, text: str) -> None:
    st.session_state[key] = text


def launch_form(path: str, digest: str, ex: source.Example | None, slot) -> source.Run | None:
    """The compile options, the kernel and its launch; compiles (progress in ``slot``) to list the kernels."""
    prefix = "yk_" + re.sub(r"\W+", "_", ex.label).strip("_") if ex else "yk_own"
    c1, c2 = st.columns([3, 2])
    defines_text = c1.text_input("-D defines", value=" ".join(ex.defines) if ex else "", key=f"{prefix}_defines",
                                 placeholder="PAD=1 TILE=32", help="preprocessor definitions, as nvcc -D")
    compiler = c2.selectbox("compiler", source.COMPILERS, key=f"{prefix}_compiler",
                            index=source.COMPILERS.index(ex.compiler) if ex else 0,
                            help="nvcc (the CUDA toolkit), or NVRTC as CuPy and PyTorch build kernels (the "
                                 "validation twins were measured built by NVRTC)")
    try:
        defines = source.parse_defines(defines_text)
    except source.InputError as e:
        st.error(f"**Cannot compile:** {e}")
        return None
    slot.progress(0.05, text=f"compiling {Path(path).name} for sm_90 with {compiler}...")
    kernels, err = built(path, digest, defines, compiler)
    slot.empty()
    if kernels is None:
        st.error(f"**Cannot compile:** {_short(err, path, ex)}")
        return None
    if not kernels:
        st.error(f"**No kernel:** {path} defines no `__global__` function")
        return None
    names = [k.name for k in kernels]
    start = names.index(ex.kernel) if ex and ex.kernel in names else 0
    name = st.selectbox("kernel", names, index=start, key=f"{prefix}_kernel",
                        help="the file's kernels, as the compiler built them")
    ck = kernels[names.index(name)]
    preset = ex is not None and name == ex.kernel
    key = f"{prefix}_{name}"
    c1, c2, c3 = st.columns(3)
    grid_text = c1.text_input("grid (blocks: x,y,z)", key=f"{key}_grid",
                              value=",".join(map(str, ex.grid)) if preset else DEFAULT_GRID)
    block_text = c2.text_input("block (threads: x,y,z)", key=f"{key}_block",
                               value=",".join(map(str, ex.block)) if preset else DEFAULT_BLOCK)
    smem = int(c3.number_input("dynamic shared memory (bytes)", 0, 1 << 20, ex.smem_dynamic if preset else 0,
                               step=1024, key=f"{key}_smem", help="the launch's third parameter (<<<g, b, smem>>>)"))
    try:
        grid, block = source.parse_dims(grid_text, "grid"), source.parse_dims(block_text, "block")
    except source.InputError as e:
        st.error(f"**No launch:** {e}")
        return None
    threads = grid[0] * grid[1] * grid[2] * block[0] * block[1] * block[2]
    guess = "\n".join(source.prefill_args(ck.signature, threads))
    args_key = f"{key}_args"
    args_text = st.text_area(
        "arguments, one a line (name=value): scalars by value, pointers as tensors dtype[elements]",
        value="\n".join(ex.args) if preset else guess, key=args_key, height=130,
        help="`n=4096`, `x=f32[4096*4096]`; contents where an address or a branch depends on them: "
             "`idx=i32[4096]:randint(0,4096)`, `:uniform(0,1)`, `:arange(1,0)`, `@file.npy` (docs/your-kernel.md)")
    sig = ", ".join(f"{t} {n}" for t, n in ck.signature) if ck.signature is not None else "not read from the source"
    left, right = st.columns([3, 1])
    left.caption(f"`{name}({sig})`: {ck.regs} registers per thread, {ck.static_smem_bytes:,} B of static shared "
                 "memory (ptxas). "
                 + ("Arguments prefilled from the signature: a tensor of one element per thread of the launch, "
                    "integers that count, floats 1.0; give the sizes your kernel needs." if not preset and ck.signature
                    else ""))
    if ck.signature:
        right.button("refill", key=f"{key}_refill", on_click=_refill, args=(args_key, guess),
                     help="the arguments again from the kernel's signature and the launch")
    return source.Run(path, digest, name, grid, block, source.parse_args(args_text), smem, defines, compiler)


# ---- the prediction -----------------------------------------------------------------------------------------------
def validation_note(m: dict, meas, cfg) -> None:
    from gpusim.frontend.validate import GOALS
    from gpusim.validation import measured_kernels

    gpu = "" if measured_kernels(cfg) else (f" No kernel measurements of the {cfg.gpu_model} are committed either: the "
                                            "model is validated on the H100 only.")
    goals = (f"time MAPE <= {GOALS['time_mape_pct']:.0f}%, worst <= {GOALS['time_worst_pct']:.0f}%, instructions "
             f"within {GOALS['inst_worst_pct']:.0f}%")
    if meas is not None:
        err = 100 * (m[TIME] / meas.time_ns - 1)
        st.warning(f"**A kernel from source is unvalidated as such.** This example is a validation twin, measured on "
                   f"the {cfg.gpu_model} at this launch (`validate/measurements/{cfg.gpu_model.lower()}/"
                   f"{meas.source}`, built by NVRTC): "
                   f"{common.fmt_time(meas.time_ns)} measured, {common.fmt_time(m[TIME])} predicted "
                   f"({err:+.0f}%). The front-end's accuracy over all the twins is what `gpusim validate --frontend` "
                   f"reports (its goals: {goals}).")
        return
    st.warning("**Unvalidated prediction: a kernel from source has no measurement of its own.** The front-end's "
               "accuracy is measured on the validation twins, which `gpusim validate --frontend` sends through this "
               f"same path and compares with the H100 (its goals: {goals}); a kernel unlike the twins may be further "
               "off." + gpu)


def headline(m: dict, info: dict, meas, cfg) -> None:
    c = st.columns(4)
    c[0].metric("predicted time", common.fmt_time(m[TIME]))
    if meas is not None:
        c[1].metric(f"measured on the {cfg.gpu_model}", common.fmt_time(meas.time_ns),
                    delta=f"{100 * (m[TIME] / meas.time_ns - 1):+.0f}% predicted", delta_color="off",
                    help=f"the twin's median time on the {cfg.gpu_model}, at this launch, built by NVRTC")
    else:
        dram = (m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"]) / (m[TIME] * 1e-9)
        c[1].metric("DRAM throughput", u.bytes_per_second(dram))
    c[2].metric("achieved occupancy", f"{m['sm__warps_active.avg.pct_of_peak_sustained_active']:.0f}%",
                help=f"{info['ctas_per_sm']} CTA(s) of {info['warps']} warps per SM, limited by "
                     f"{m['gpusim__occupancy_limiter']}")
    c[3].metric("warp instructions", u.count(m["smsp__inst_executed.sum"], ""),
                help="smsp__inst_executed.sum: the compiled code's instructions, executed by every warp of the launch")


def cycles_chart(top: pd.DataFrame) -> alt.Chart:
    """Each line's cycles of the L1/shared pipe: a global access's 128-B lines, a shared access's wavefronts split into
    the conflict-free ones and the bank conflicts."""
    mnemonic = top["SASS"].str.replace(r"^@\S+\s+", "", regex=True).str.split().str[0]  # past a guard
    label = top["address"] + " " + mnemonic
    conflicts = top["bank conflicts"].fillna(0)
    parts = []
    for what, cycles in ((GLOBAL_LINES, top["lines"].fillna(0)),
                         (CONFLICT_FREE, top["wavefronts"].fillna(0) - conflicts), (CONFLICTS, conflicts)):
        parts.append(pd.DataFrame({"line": label, "SASS": top["SASS"], "IR op": top["IR op"], "work": what,
                                   "cycles": cycles, "share": top["% of L1/shared pipe"]}))
    data = pd.concat(parts)
    data = data[data["cycles"] > 0]
    works = [GLOBAL_LINES, CONFLICT_FREE, CONFLICTS]
    return alt.Chart(data).mark_bar().encode(
        x=alt.X("sum(cycles):Q", title="L1/shared pipe cycles over the launch (global lines, shared wavefronts)"),
        y=alt.Y("line:N", sort=list(label), title=None, axis=alt.Axis(labelLimit=240, labelOverlap=False)),
        color=alt.Color("work:N", title=None, scale=alt.Scale(domain=works, range=["#4c78a8", "#9ecae9", "#e45756"]),
                        sort=works, legend=alt.Legend(orient="bottom", labelLimit=320)),
        order=alt.Order("work_order:Q"),
        tooltip=["line", "SASS", "IR op", "work", alt.Tooltip("cycles:Q", format=",.0f"),
                 alt.Tooltip("share:Q", title="% of these lines' cycles", format=".1f")],
    ).transform_calculate(work_order=f"indexof({works!r}, datum.work)").properties(
        height=max(160, 22 * len(top)))


def lines_tab(res: dict) -> None:
    df = pd.DataFrame(res["lines"])
    done = df[df["instructions"] > 0]
    st.markdown("Each memory instruction of the kernel's SASS, with what the whole launch did with it, as Nsight "
                "Compute's *Source* page shows it: **instructions** executed (warp-level), global **sectors per "
                "request** (32-B sectors; 4 is a warp's coalesced 4-byte access, 32 one sector per lane), shared "
                "**wavefronts per instruction** against the conflict-free (ideal) ones, and **bank conflicts** (the "
                "wavefronts above ideal, ncu's `l1tex__data_bank_conflicts_pipe_lsu_mem_shared`).")
    if len(done):
        top = done.nlargest(CHART_LINES, "% of L1/shared pipe", keep="first").sort_index()
        st.altair_chart(cycles_chart(top), width="stretch")
        if len(done) > len(top):
            st.caption(f"The chart shows the {len(top)} of {len(done)} executed memory instructions with the most "
                       "cycles; the table below has every one.")
    fmt = st.column_config.NumberColumn
    st.dataframe(df.drop(columns=["run"]), hide_index=True, width="stretch", column_config={
        "instructions": fmt(format="localized"), "sectors": fmt(format="localized"),
        "wavefronts": fmt(format="localized"), "bank conflicts": fmt(format="localized"),
        "lines": fmt(format="localized"),
        "sectors/request": fmt(format="%.2f"), "wavefronts/instruction": fmt(format="%.2f"),
        "ideal wavefronts/instruction": fmt(format="%.2f"),
        "% of L1/shared pipe": st.column_config.ProgressColumn(format="%.1f%%", min_value=0, max_value=100)})
    runs = df[df["run"] > 1]
    st.caption("The IR op is the operation the front-end made of the instruction (`<part>_<mnemonic>_<address>`: p "
               "before the loop, l in it, e after it); its counts are over every warp of the launch, the loop's "
               "iterations included."
               + (f" {len(runs)} lines belong to runs of alike instructions that the IR times as one operation; a "
                  "run's counts are split between its lines as the middle CTA's first iteration splits them."
                  if len(runs) else ""))
    if res["lost"]:
        st.caption(f"IR operations without a SASS line: {', '.join(res['lost'])}.")
    if st.checkbox("show every SASS line", key="yk_listing"):
        st.dataframe(pd.DataFrame(res["listing"]), hide_index=True, width="stretch", height=420)


def stalls_tab(m: dict) -> None:
    rows = [{"reason": r, "warps per issue": v, "what the model's warps waited on": stalls.explain(r, m, top=3)}
            for r, v in bottleneck.stalls(m).items() if v > 0]
    table = pd.DataFrame(rows, columns=["reason", "warps per issue", "what the model's warps waited on"]) \
        .sort_values("warps per issue", ascending=False)
    st.altair_chart(alt.Chart(table).mark_bar().encode(
        x=alt.X("warps per issue:Q", title="warps stalled per instruction issued"),
        y=alt.Y("reason:N", sort="-x", title=None),
        tooltip=["reason", alt.Tooltip("warps per issue:Q", format=".3f")]), width="stretch")
    st.dataframe(table, hide_index=True, width="stretch",
                 column_config={"warps per issue": st.column_config.NumberColumn(format="%.3f")})


def metrics_tab(m: dict) -> None:
    fm = sections.flat(m)
    rows = [{"section": sections.section_of(k), "ncu metric": k, "unit": sections.unit_of(k),
             "value": sections.value_text(k, v),
             "meaning": sections.info(k.split(".")[0] if k.startswith("gpusim__") else k).meaning}
            for k, v in fm.items() if k != "gpusim__verdict"]
    order = {s: i for i, s in enumerate(sections.SECTIONS)}
    table = pd.DataFrame(rows).sort_values("section", key=lambda c: c.map(order), kind="stable")
    st.dataframe(table, hide_index=True, width="stretch", height=520)
    st.caption("Names are Nsight Compute's; `gpusim__*` keys have none. `gpusim run FILE.cu ... --csv` gives the same "
               "table.")


def timeline_tab(res: dict, run: source.Run, cfg_path: str) -> None:
    view = res["timeline"]
    if view["bars"]:
        df = pd.DataFrame(view["bars"])
        rows = list(dict.fromkeys(df.sort_values("order")["row"]))
        acts = [x for x in timeline.ACTIVITIES if x in set(df["activity"])] + sorted(
            set(df["activity"]) - set(timeline.ACTIVITIES))
        st.altair_chart(alt.Chart(df).mark_bar(clip=True).encode(
            x=alt.X("start:Q", title="cycle (one SM, its first CTAs)"), x2="end:Q",
            y=alt.Y("row:N", sort=rows, title=None), yOffset=alt.YOffset("activity:N", sort=acts),
            color=alt.Color("activity:N", sort=acts),
            tooltip=["row", "activity", "ops", alt.Tooltip("start:Q", format=",.0f"),
                     alt.Tooltip("end:Q", format=",.0f"), alt.Tooltip("count:Q", title="spans merged")],
        ).properties(height=max(240, 36 * len(rows))).interactive(bind_y=False), width="stretch")
        st.caption("One SM's first warps: each row a warp, each colour an activity (loads drawn from issue to "
                   "arrival; stalls are waits on a dependency). Scroll to zoom in time, drag to pan."
                   + (f" Showing the first {view['shown']:,.0f} of {view['end']:,.0f} cycles." if view["shown"] <
                      view["end"] else ""))
    else:
        st.info("The simulation recorded no timeline for this launch.")
    st.download_button("download Perfetto trace (.json)", key="yk_trace",
                       data=lambda: trace_json(run, cfg_path), file_name=f"{run.kernel}.trace.json",
                       mime="application/json", on_click="ignore", icon=":material/download:")
    st.caption("Open it in [ui.perfetto.dev](https://ui.perfetto.dev) or chrome://tracing: one track per warp, one "
               "slice per operation or stall (`gpusim trace`'s format).")


def main() -> None:
    left, right = st.columns([1, 1])
    slot = st.empty()  # the progress bar, below the form
    with left:
        st.subheader("Source", divider="gray")
        picked = pick_source()
    if picked is None:
        return
    name, data, ex = picked
    digest = source.digest(data)
    try:
        path = str(source.REPO / ex.path) if ex else str(source.write_source(data, name))
    except source.InputError as e:
        st.error(f"**Cannot read the source:** {e}")
        return
    with right:
        st.subheader("Launch", divider="gray")
        run = launch_form(path, digest, ex, slot)
    if run is None:
        return
    cfg_path = common.config_path()
    cfg = catalog.config(cfg_path)
    slot.progress(0.3, text=f"emulating {run.kernel}'s SASS for the CTAs the model needs...")
    emulated(run, cfg_path)
    slot.progress(0.6, text=f"simulating {run.kernel} on the {cfg.name}...")
    res = prediction(run, cfg_path)
    slot.empty()
    if res["metrics"] is None:
        st.error(f"**No prediction:** {_short(res['error'], path, ex)}")
        return
    m, info = res["metrics"], res["kernel"]
    meas = None
    if ex is not None and ex.measured and run == source.Run(path, digest, ex.kernel, ex.grid, ex.block, ex.args,
                                                            ex.smem_dynamic, ex.defines, ex.compiler):
        from gpusim.app import ladder

        kernel, shape, params = ex.measured
        meas = common.measurements(cfg_path)[0].get((kernel, tuple(shape), ladder.params_key(params)))
    st.subheader(f"Prediction: {run.kernel}", divider="gray")
    headline(m, info, meas, cfg)
    a = bottleneck.analyze(m, cfg)
    st.info(f"**Verdict:** {m['gpusim__verdict']}")
    named = sorted({o for o in re.findall(r"'([a-z0-9_]+)'", m["gpusim__verdict"]) if source.OP_NAME.match(o)})
    if named:
        st.caption("The verdict names IR operations: " + ", ".join(
            f"`{o}` is the SASS line at 0x{int(source.OP_NAME.match(o).group('addr'), 16):04x}" for o in named)
            + " (memory instructions tab).")
    validation_note(m, meas, cfg)
    st.caption(f"Predicted for the {cfg.name}: grid {' x '.join(map(str, run.grid))} ({info['ctas']:,} CTAs), block "
               f"{' x '.join(map(str, run.block))} ({info['warps']} warps), {info['regs']} registers per thread, "
               f"{info['static_smem'] + info['dynamic_smem']:,} B of shared memory per CTA"
               + (f", a loop of {info['trips']:,} iterations" if info["trips"] else "") + ".")
    if info["notes"]:
        st.caption(f"What the emulation assumed: {info['notes']}")
    t1, t2, t3, t4, t5 = st.tabs(["memory instructions (SASS)", "speed of light", "warp state", "ncu metrics",
                                  "timeline"])
    with t1:
        lines_tab(res)
    with t2:
        common.sol_panel(m, a)
    with t3:
        stalls_tab(m)
    with t4:
        metrics_tab(m)
    with t5:
        timeline_tab(res, run, cfg_path)


main()
