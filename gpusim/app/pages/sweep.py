"""Sweep: every combination of a kernel's knobs (as ``gpusim sweep``), or a sweep's Parquet table; the heatmap,
the Pareto front, and any point opened in the kernel explorer."""

from __future__ import annotations

import io

import altair as alt
import pandas as pd
import streamlit as st

from gpusim import sweep
from gpusim.app import catalog
from gpusim.app.pages import common

EXPLORER = "gpusim/app/pages/explorer.py"
MAX_APP_POINTS = 256  # a sweep in the page runs in the app's process: larger ones belong to `gpusim sweep`
SHAPES = {"sgemm": "1024,1024,1024", "hgemm": "1024,1024,1024"}  # small enough for a sweep in the page

st.title("Sweep")
st.markdown("Every combination of a kernel's knobs, predicted: which tile size, stage count, swizzle or tile order "
            "to ship for a shape, and why. The same as `gpusim sweep` (which runs in parallel, on a Dask cluster, and "
            "caches every point); load its Parquet table here to explore a large sweep.")


def launching_stages(name: str, shape: tuple[int, ...] | None) -> set[str] | None:
    """The stage counts of ``name`` whose shared memory lets a CTA launch at ``shape`` (None: not known)."""
    if shape is None or "stages" not in catalog.registry()[name].defaults:
        return None
    from gpusim.app import pipeline

    points = pipeline.smem_sweep(name, shape, {}, catalog.config(common.config_path()))
    return {str(p.stages) for p in points if p.fits} or None


def knob_values(name: str, shape: tuple[int, ...] | None = None) -> dict[str, list[str]]:
    """One widget per knob: a multiselect of its choices, or a list such as ``1..4,8``."""
    out = {}
    specs = catalog.knobs(name)
    cols = st.columns(min(max(len(specs), 1), 4))
    for i, k in enumerate(specs):
        key = f"sp_{name}_{k.name}"
        with cols[i % len(cols)]:
            if k.kind in ("choice", "bool"):
                options = list(k.choices) if k.kind == "choice" else [False, True]
                # the page opens on a sweep that varies something: the first knob with choices, all of them (the
                # stage counts that launch at the shape, when that knob is the stages)
                default = options if i == first_choice(specs) else [k.default]
                fits = launching_stages(name, shape) if k.name == "stages" and i == first_choice(specs) else None
                if fits:
                    default = [v for v in options if str(v) in fits]
                picked = st.multiselect(k.name, options, default=default, key=key)
                out[k.name] = [str(int(v)) if isinstance(v, bool) else str(v) for v in picked]
            else:
                text = st.text_input(f"{k.name} (e.g. 1..4,8)", value=str(k.default), key=key)
                try:
                    out[k.name] = sweep.parse_values(k.name, text)
                except sweep.SweepError as e:
                    st.error(str(e))
                    out[k.name] = []
    return {k: v for k, v in out.items() if v != [str(catalog_default(name, k))]}


def first_choice(specs) -> int:
    """The knob the page varies when it opens: the first with a list of choices (-1: none)."""
    return next((i for i, k in enumerate(specs) if k.kind == "choice"), -1)


def catalog_default(name: str, knob: str):
    v = catalog.registry()[name].defaults[knob]
    return int(v) if isinstance(v, bool) else v


def run_in_page(name: str, shape: tuple[int, ...], vary: dict[str, list[str]]) -> None:
    try:
        plan = sweep.plan([name], [shape], vary, configs=[common.config_path()], max_points=MAX_APP_POINTS)
    except ValueError as e:  # SweepError, KernelError, ConfigError: one line
        st.error(f"**Cannot sweep:** {e}")
        return
    bar = st.progress(0.0, text=f"simulating {len(plan.points)} points...")

    def progress(done: int, total: int) -> None:
        bar.progress(done / max(total, 1), text=f"simulating {name}: {done}/{total} points")

    outcome = sweep.run(plan, workers=1, cache=sweep.Cache(sweep.default_cache_dir()), progress=progress)
    bar.empty()
    columns, rows = sweep.rows(plan, outcome)
    st.session_state["sp_result"] = {"columns": columns, "rows": rows, "varied": plan.varied,
                                     "source": f"{outcome.computed} computed, {outcome.cached} from the cache"}


def varied_of(columns: list[str], rows: list[dict], meta: dict) -> list[str]:
    """The varied knobs of a loaded table: as its metadata names them, else the knob columns (between the shape
    and ``gpusim__error``) that take more than one value."""
    if meta.get("varied") is not None:
        return [k for k in meta["varied"] if k in columns]
    start = len(sweep.ID_COLUMNS)
    end = columns.index(sweep.ERROR)
    dims = set(meta.get("dims") or ())
    return [c for c in columns[start:end] if c not in dims and len({r.get(c) for r in rows}) > 1]


def load_file(data: bytes, name: str) -> None:
    try:
        columns, rows, meta = sweep.read_parquet(io.BytesIO(data))
    except Exception as e:  # not a Parquet file: a message, not a trace
        st.error(f"**Cannot read {name}:** {type(e).__name__}: {e}")
        return
    missing = [c for c in (*sweep.ID_COLUMNS, sweep.ERROR) if c not in columns]
    if missing:
        st.error(f"**{name} is not a gpusim sweep table:** no column {', '.join(missing)}")
        return
    st.session_state["sp_result"] = {"columns": columns, "rows": rows, "varied": varied_of(columns, rows, meta),
                                     "source": f"loaded from {name}"}


def label(r: dict, knobs: list[str]) -> str:
    return f"{r['kernel']} {r['shape']} {sweep.knobs_label(r, knobs)} on {r['config']}"


def chart(rows: list[dict], varied: list[str]) -> alt.Chart | None:
    good = sweep.ok_rows(rows)
    if not good or not varied:
        return None
    df = pd.DataFrame([{**{k: str(r.get(k)) for k in varied}, "time (us)": r[sweep.TIME] / 1e3, "point": i}
                       for i, r in enumerate(good)])
    order = {k: [str(v) for v in sweep._values(rows, k)] for k in varied}
    if len(varied) == 2:
        a, b = varied
        base = alt.Chart(df).encode(x=alt.X(f"{b}:O", sort=order[b]), y=alt.Y(f"{a}:O", sort=order[a]))
        return (base.mark_rect().encode(color=alt.Color("min(time (us)):Q", scale=alt.Scale(scheme="viridis",
                                                                                              reverse=True)),
                                        tooltip=[a, b, alt.Tooltip("min(time (us)):Q", format=".2f")])
                + base.mark_text(fontSize=10).encode(text=alt.Text("min(time (us)):Q", format=".3g")))
    k = varied[0]
    return alt.Chart(df).mark_line(point=True).encode(
        x=alt.X(f"{k}:O", sort=order[k]),
        y=alt.Y("min(time (us)):Q", title="best predicted time (us)", axis=alt.Axis(format=",.3~g")),
        tooltip=[k, alt.Tooltip("min(time (us)):Q", format=".2f")])


def front_chart(rows: list[dict], knobs: list[str]) -> tuple[alt.Chart, list[dict]]:
    front = sweep.pareto(rows, sweep.SMEM, min_gain_pct=sweep.model_error_pct())
    on_front = {id(r) for r in front}
    df = pd.DataFrame([{"time (us)": r[sweep.TIME] / 1e3, "shared memory per CTA (KB)": (r.get(sweep.SMEM) or 0) / 1024,
                        "occupancy %": r.get(sweep.OCCUPANCY), "knobs": sweep.knobs_label(r, knobs),
                        "on the front": id(r) in on_front} for r in sweep.ok_rows(rows)])
    c = alt.Chart(df).mark_circle(size=70).encode(
        x="shared memory per CTA (KB):Q",
        y=alt.Y("time (us):Q", scale=alt.Scale(zero=False), axis=alt.Axis(format=",.3~g")),
        color=alt.Color("on the front:N", scale=alt.Scale(domain=[True, False], range=["#e45756", "#9ecae9"])),
        tooltip=["knobs", alt.Tooltip("time (us):Q", format=".2f"), "shared memory per CTA (KB)", "occupancy %"])
    return c, front


def open_in_explorer(r: dict) -> None:
    """Set the kernel explorer's widgets (and the sidebar's config) to this point; the next run goes there. A
    button callback: it runs before the widgets of the next run exist, so it may set them."""
    name = r["kernel"]
    st.session_state["ex_kernel"] = name
    st.session_state[f"ex_{name}_shape"] = r["shape"]
    for k in catalog.knobs(name):
        if r.get(k.name) is not None:
            st.session_state[f"ex_{name}_{k.name}"] = r[k.name]
    for lab, path in catalog.config_choices().items():
        if path.endswith(r["config_file"]):
            st.session_state["config"] = lab
    st.session_state["sp_goto"] = True


def show(result: dict) -> None:
    rows, varied = result["rows"], result["varied"]
    good = sweep.ok_rows(rows)
    c = st.columns(4)
    c[0].metric("points", len(rows))
    c[1].metric("predicted", len(good))
    c[2].metric("cannot launch", len(rows) - len(good))
    best = sweep.top(rows, 1)
    c[3].metric("best time", common.fmt_time(best[0][sweep.TIME]) if best else "-",
                help=sweep.knobs_label(best[0], varied) if best else None)
    st.caption(result["source"])
    if not good:
        st.warning("No point of this sweep can launch: " + (rows[0].get(sweep.ERROR) or "") if rows else "empty")
        return
    left, right = st.columns(2)
    with left:
        st.subheader("time against the knobs" if len(varied) != 2 else "heatmap: best time (us)")
        ch = chart(rows, varied)
        if ch is not None:
            st.altair_chart(ch, width="stretch")
        else:
            st.caption("No knob varies.")
    with right:
        st.subheader("Pareto front: time vs shared memory")
        fc, front = front_chart(rows, varied)
        st.altair_chart(fc, width="stretch")
        st.caption("Front: " + "; ".join(f"{sweep.knobs_label(r, varied)} {common.fmt_time(r[sweep.TIME])}"
                                          for r in front)
                   + f". A point joins it only if it is faster by more than the model's {sweep.model_error_pct():g}% "
                     "time error (validate/tolerances.toml) than every point using less shared memory.")
    table = pd.DataFrame([{"point": label(r, varied), "time (us)": r[sweep.TIME] / 1e3 if r.get(sweep.TIME) else None,
                           "smem/CTA (KB)": (r.get(sweep.SMEM) or 0) / 1024 if not r.get(sweep.ERROR) else None,
                           "occupancy %": r.get(sweep.OCCUPANCY), "cannot launch": r.get(sweep.ERROR) or ""}
                          for r in rows])
    st.dataframe(table.sort_values("time (us)", na_position="last"), hide_index=True, width="stretch", height=300,
                 column_config={"time (us)": st.column_config.NumberColumn(format="%.2f"),
                                "smem/CTA (KB)": st.column_config.NumberColumn(format="%.1f"),
                                "occupancy %": st.column_config.NumberColumn(format="%.1f")})
    ranked = sorted(good, key=lambda r: r[sweep.TIME])
    labels = [label(r, varied) for r in ranked]
    pick = st.selectbox("open a point in the kernel explorer (fastest first)", labels, key="sp_point")
    st.button("open in kernel explorer", key="sp_open", icon=":material/query_stats:", on_click=open_in_explorer,
              args=(ranked[labels.index(pick)],))


def main() -> None:
    if st.session_state.pop("sp_goto", False):
        st.switch_page(EXPLORER)
    reg = catalog.registry()
    tuned = [n for n, kd in reg.items() if kd.defaults]
    run_tab, load_tab = st.tabs(["run a sweep", "load a Parquet table"])
    with run_tab:
        top = st.columns([2, 2])
        with top[0]:
            name = st.selectbox("kernel", tuned, index=tuned.index("hgemm_ws") if "hgemm_ws" in tuned else 0,
                                key="sp_kernel", format_func=lambda n: f"{reg[n].family} / {n}")
        common.warn_unvalidated(name)
        with top[1]:
            kd = reg[name]
            default = SHAPES.get(kd.family) or ",".join(map(str, catalog.default_shape(name)))
            text = st.text_input(f"shape ({','.join(kd.shape_names)})", value=default, key=f"sp_{name}_shape")
        try:
            shape = catalog.parse_shape(text, name)
        except ValueError as e:
            st.error(str(e))
            shape = None
        vary = knob_values(name, shape)
        n = 1
        for v in vary.values():
            n *= len(v)
        st.caption(f"{n} point(s) on the config chosen in the sidebar (at most {MAX_APP_POINTS} here)")
        if st.button("run sweep", key="sp_run", type="primary", disabled=shape is None):
            run_in_page(name, shape, vary)
    with load_tab:
        up = st.file_uploader("a table written by gpusim sweep -o FILE.parquet", type=["parquet"], key="sp_file")
        if up is not None and st.session_state.get("sp_loaded") != (up.name, up.size):
            load_file(up.getvalue(), up.name)
            st.session_state["sp_loaded"] = (up.name, up.size)
    result = st.session_state.get("sp_result")
    if result:
        show(result)


main()
