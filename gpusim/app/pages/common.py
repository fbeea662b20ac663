"""What every page shares: the selected config, cached predictions, progress for sweeps, knob widgets."""

from __future__ import annotations

import json

import streamlit as st

from gpusim.app import catalog, ladder, timeline

Overrides = tuple[tuple[str, object], ...]  # hashable knob overrides, sorted by name


def user_kernels(prefix: str) -> None:
    """A path box and an upload widget for the user's own kernel file (loaded like ``--kernels``)."""
    with st.expander("your own kernel (a .py file or folder, as with --kernels)"):
        path = st.text_input("path to a kernel file or folder", key=f"{prefix}_kernels_path",
                             placeholder="examples/")
        up = st.file_uploader("or upload a kernel file", type=["py"], key=f"{prefix}_kernels_file")
        err = catalog.load_kernels(path, (up.name, up.getvalue()) if up is not None else None)
    if err:
        st.error(f"**Cannot load the kernel file:** {err}")


def config_path() -> str:
    return st.session_state.get("config_path") or str(catalog.DEFAULT_CONFIG)


def frozen(overrides: dict) -> Overrides:
    return tuple(sorted(overrides.items()))


@st.cache_data(max_entries=2048, show_spinner=False)
def metrics_of(name: str, shape: tuple[int, ...], overrides: Overrides, cfg_path: str) -> tuple[dict | None, str]:
    """(ncu-named metrics, "") or (None, the one-line reason there is no prediction)."""
    o = catalog.predict(name, shape, dict(overrides), cfg_path)
    return o.metrics, o.error


@st.cache_data(max_entries=256, show_spinner=False)
def timeline_of(name: str, shape: tuple[int, ...], overrides: Overrides, cfg_path: str) -> dict:
    """A traced prediction reduced to what the pipeline lab draws: metrics, Gantt bars per warp and per
    warpgroup, and the share of time in each activity."""
    o = catalog.predict(name, shape, dict(overrides), cfg_path, trace=True)
    if not o.ok:
        return {"metrics": None, "error": o.error}
    sim = o.sim
    res = sim.result
    wpc = -(-sim.kernel.launch.threads_per_block // sim.config.sm.warp_size_threads)
    views = {}
    for wg in (False, True):
        bars, shown, end = timeline.bars(res.trace, wpc, warpgroups=wg)
        views[wg] = {"bars": [b.__dict__ for b in bars], "shown": shown, "end": end}
    return {"metrics": o.metrics, "error": "", "views": views, "warps_per_cta": wpc,
            "busy": timeline.busy_share(res.trace, wpc), "extrapolated": timeline.extrapolated_share(res.trace),
            "ctas_per_sm": sim.occ.ctas_per_sm,
            "iterations": res.simulated_iterations, "fast_forward": bool(res.fast_forward)}


@st.cache_data(show_spinner=False)
def measurements(cfg_path: str) -> tuple[dict, list]:
    """Every measurement of the config's GPU model in validate/measurements/ (see ``gpusim.app.ladder``)."""
    return ladder.load_measured(catalog.config(cfg_path))


@st.cache_data(max_entries=8, show_spinner=False)
def trace_json(name: str, shape: tuple[int, ...], overrides: Overrides, cfg_path: str) -> bytes:
    """The Perfetto / chrome://tracing file of one SM, as ``gpusim trace`` writes it."""
    from gpusim.trace import chrome_trace

    o = catalog.predict(name, shape, dict(overrides), cfg_path, trace=True)
    if not o.ok:
        return json.dumps({"error": o.error}).encode()
    return json.dumps(chrome_trace(o.sim), separators=(",", ":")).encode()


def sweep(jobs: list[tuple[str, tuple[int, ...], dict]], what: str, traced: bool = False) -> list:
    """Run several cached predictions with a progress bar (cached ones return at once)."""
    slot = st.empty()
    bar = slot.progress(0.0, text=f"simulating {what}...")
    out = []
    for i, (name, shape, overrides) in enumerate(jobs):
        bar.progress(i / max(len(jobs), 1), text=f"simulating {what}: {name} {overrides or ''} ({i + 1}/{len(jobs)})")
        fn = timeline_of if traced else metrics_of
        out.append(fn(name, tuple(shape), frozen(overrides), config_path()))
    slot.empty()
    return out


def knob_widgets(name: str, prefix: str, skip: tuple[str, ...] = ()) -> dict:
    """One widget per knob of the kernel (keys unique per kernel); returns the knobs that differ from the
    defaults."""
    out = {}
    specs = [k for k in catalog.knobs(name) if k.name not in skip]
    if not specs:
        return out
    cols = st.columns(min(len(specs), 4))
    for i, k in enumerate(specs):
        key = f"{prefix}_{name}_{k.name}"
        with cols[i % len(cols)]:
            if k.kind == "bool":
                v = st.checkbox(k.name, value=bool(k.default), key=key)
            elif k.kind == "choice":
                v = st.selectbox(k.name, list(k.choices), index=list(k.choices).index(k.default), key=key)
            elif k.kind == "int":
                v = int(st.number_input(k.name, value=int(k.default), step=1, key=key))
            else:
                v = st.text_input(k.name, value=str(k.default), key=key)
        if v != k.default:
            out[k.name] = v
    return out


def shape_input(name: str, prefix: str) -> tuple[int, ...] | None:
    """A text box for the shape; shows the problem and returns None when it cannot be parsed."""
    kd = catalog.registry()[name]
    default = ",".join(map(str, catalog.default_shape(name)))
    text = st.text_input(f"shape ({','.join(kd.shape_names)})", value=default, key=f"{prefix}_{name}_shape")
    try:
        return catalog.parse_shape(text, name)
    except ValueError as e:
        st.error(str(e))
        return None


def unvalidated(name: str) -> str:
    """"" when measurements of this kernel's family on the selected GPU are committed, else why the prediction is
    unvalidated (one sentence)."""
    from gpusim.validation import unvalidated_note

    return unvalidated_note(catalog.config(config_path()), name)


def warn_unvalidated(name: str) -> None:
    note = unvalidated(name).removeprefix("unvalidated: ")
    if note:
        st.warning(f"**Unvalidated prediction.** {note}")


def fmt_time(ns: float) -> str:
    if ns >= 1e6:
        return f"{ns / 1e6:.3f} ms"
    return f"{ns / 1e3:.1f} µs"


def sol_panel(m: dict, a) -> None:
    """Nsight Compute's Speed Of Light as the pages draw it: each unit's share of its own peak (the limiter in red),
    what it means, and the table; ``a``: :func:`gpusim.bottleneck.analyze` of the metrics ``m``."""
    import altair as alt
    import pandas as pd

    from gpusim import bottleneck
    from gpusim import units as u

    sol = pd.DataFrame([{"unit": x.unit, "% of peak": x.pct, "work": x.work, "peak": x.peak,
                         "what it is": bottleneck.MEANING.get(x.unit, "")} for x in a.units])
    left, right = st.columns([3, 2])
    with left:
        st.altair_chart(alt.Chart(sol).mark_bar().encode(
            x=alt.X("% of peak:Q", scale=alt.Scale(domain=[0, 100]), title="% of the unit's peak"),
            y=alt.Y("unit:N", sort=list(sol["unit"]), title=None),
            color=alt.condition(alt.datum.unit == a.limiter, alt.value("#e45756"), alt.value("#4c78a8")),
            tooltip=["unit", alt.Tooltip("% of peak:Q", format=".1f"), "work", "peak"]), width="stretch")
    with right:
        st.markdown(f"Each unit's busy time over the kernel's {fmt_time(m['gpu__time_duration.sum'])}, as a share of "
                    f"its own peak at the clock the model ran ({u.hertz(m['sm__cycles_elapsed.avg.per_second'])}), as "
                    f"Nsight Compute's *Speed Of Light* section. The largest (red, **{a.limiter}**) limits the "
                    f"kernel when it is at {bottleneck.BOUND_THRESHOLD_PCT:.0f}% or more; below that no unit is "
                    "saturated and the kernel is *latency-bound*: its warps wait (see warp state).")
    st.dataframe(sol, hide_index=True, width="stretch",
                 column_config={"% of peak": st.column_config.NumberColumn(format="%.1f%%")})
