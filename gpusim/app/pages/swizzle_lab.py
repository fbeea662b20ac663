"""Swizzle lab: a shared-memory tile, an access pattern and a layout; the banks one warp instruction hits."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from gpusim.app import banks, catalog, ladder
from gpusim.app.pages import common
from gpusim.ncu import TIME

LAYOUTS = ("none", "padding", "XOR 32B", "XOR 64B", "XOR 128B", "CuTe Swizzle<B,M,S>")

st.title("Swizzle lab")
st.markdown(
    "Shared memory is split into **32 banks** of 4 bytes: byte address *a* lives in bank *(a / 4) mod 32*. "
    "A warp instruction is served in **wavefronts**: each wavefront reads at most one 4-byte word from each "
    "bank. When lanes need different words of the same bank, the instruction takes more wavefronts: a "
    "**bank conflict**. Padding or an XOR swizzle moves the words of a tile so that the lanes spread over "
    "the banks.")


def controls() -> tuple[banks.Tile, banks.Layout, str, int]:
    c1, c2, c3 = st.columns(3)
    with c1:
        st.subheader("Tile", divider="gray")
        rows = int(st.number_input("rows", 1, 256, 64, key="sw_rows"))
        cols = int(st.number_input("columns (elements)", 1, 512, 64, key="sw_cols"))
        dtype = st.selectbox("dtype", list(banks.DTYPES), index=1, key="sw_dtype")
    with c2:
        st.subheader("Access", divider="gray")
        access = st.selectbox("one warp instruction", banks.ACCESSES, index=2, key="sw_access",
                              help="row-wise / column-wise: ld.shared by 32 lanes; ldmatrix.x4: the A fragment of "
                                   "mma.m16n8k16 (16 rows x 32 B); wgmma operand: 8-row x 16-B core matrices")
        width = 16
        if access not in banks.MATRIX_ACCESSES:
            width = st.select_slider("bytes per lane", (4, 8, 16), value=4, key="sw_width",
                                     help="32-, 64- or 128-bit loads (LDS.32 / LDS.64 / LDS.128)")
        else:
            st.caption("Each of the 32 lanes gives the address of one 16-byte row; each 8-row matrix is one "
                       "128-byte phase.")
    with c3:
        st.subheader("Layout", divider="gray")
        kind = st.selectbox("layout", LAYOUTS, key="sw_layout")
        layout = banks.Layout()
        if kind == "padding":
            pad = int(st.number_input("pad each row by N elements", 0, 64, 8, key="sw_pad"))
            layout = banks.Layout("pad", pad_elems=pad)
        elif kind.startswith("XOR"):
            layout = banks.Layout("xor", mode=kind.split()[1])
        elif kind.startswith("CuTe"):
            b1, b2, b3 = st.columns(3)
            b = int(b1.number_input("B", 0, 5, 3, key="sw_b", help="bits XORed: 2^B units permuted"))
            m = int(b2.number_input("M", 0, 6, 3, key="sw_m", help="2^M elements move together"))
            s = int(b3.number_input("S", 0, 8, 3, key="sw_s", help="shift: row bits start at M+S"))
            layout = banks.Layout("cute", bms=(b, m, s))
            st.caption("Swizzle<B,M,S> maps element index i to i ^ ((i >> S) & mask), mask = bits [M, M+B). "
                       "On 2-byte elements Swizzle<3,3,3> is the 128B mode.")
    return banks.Tile(rows, cols, dtype, banks.Geometry.of(catalog.config(common.config_path()))), layout, access, width


def heatmap(a: banks.Analysis) -> alt.Chart:
    df = pd.DataFrame([c.__dict__ for c in a.cells])
    grouped = (df.groupby(["wavefront", "bank"])
               .agg(lanes=("lane", lambda s: ",".join(str(x) for x in sorted(set(s)))),
                    lane=("lane", "min"), address=("address", "min"), words=("address", "nunique"))
               .reset_index())
    base = alt.Chart(grouped).encode(
        x=alt.X("bank:O", title="bank", scale=alt.Scale(domain=list(range(a.tile.geo.banks)))),
        y=alt.Y("wavefront:O", title="wavefront", sort="ascending"))
    rect = base.mark_rect(stroke="white").encode(
        color=alt.Color("lane:Q", title="lane", scale=alt.Scale(scheme="viridis", domain=[0, 31])),
        tooltip=["wavefront", "bank", alt.Tooltip("lanes", title="lanes"), alt.Tooltip("address", title="byte")])
    text = base.mark_text(fontSize=9, color="white").encode(text="lanes")
    return (rect + text).properties(height=max(160, 24 * a.wavefronts + 40))


def tile_picture(tile: banks.Tile, layout: banks.Layout, access: banks.Access) -> alt.Chart:
    df = pd.DataFrame(banks.tile_banks(tile, layout, access))
    base = alt.Chart(df).encode(
        x=alt.X("word:O", title="4-byte word of the row (logical)", axis=alt.Axis(labels=False)),
        y=alt.Y("row:O", title="row"))
    rect = base.mark_rect().encode(
        color=alt.Color("bank:Q", scale=alt.Scale(scheme="rainbow", domain=[0, 31]), title="bank"),
        opacity=alt.condition("datum.read", alt.value(1.0), alt.value(0.4)),
        tooltip=["row", "word", "bank", "read"])
    text = base.transform_filter("datum.read").mark_text(fontSize=8).encode(text="bank:Q")
    return (rect + text).properties(height=min(16 * df["row"].nunique(), 640))


def effect_on_time(tile: banks.Tile, layout: banks.Layout) -> None:
    st.subheader("Effect on a kernel's time", divider="gray")
    names = catalog.kernels_with("swizzle")
    if not names:
        st.info("No registered kernel has a `swizzle` knob yet: the tensor-core GEMMs (`hgemm_*`) and the attention "
                "kernels bring one. Once they are registered this panel predicts their time for each layout.")
        return
    left, right = st.columns([3, 2])
    with right:
        name = st.selectbox("kernel with a swizzle knob", names, key="sw_kernel")
        kd = catalog.registry()[name]
        st.caption(kd.doc)
        mode = banks.kernel_swizzle_mode(layout, tile.element_bytes)
        st.markdown(
            "The kernel keeps its own tiles (for the tensor-core GEMMs: 64-element bf16 rows, 128 B); only the "
            "layout carries over. Each blue bar is one full simulation of the kernel at its default shape.")
    modes = catalog.knob_values(name, "swizzle", banks.XOR_MODES)
    shape = catalog.default_shape(name)
    with right:
        common.warn_unvalidated(name)
    results = common.sweep([(name, shape, {"swizzle": m}) for m in modes], f"{name} per swizzle mode")
    measured, _ = common.measurements(common.config_path())
    rows, errors = [], {}
    for m, (metrics, err) in zip(modes, results, strict=True):
        if metrics:
            rows.append({"swizzle": m, "source": "predicted", "time (ms)": metrics[TIME] / 1e6,
                         "chosen": m == mode, "ldmatrix conflicts": metrics.get(
                             "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum", 0)})
        else:
            errors[m] = err
        meas = ladder.lookup(measured, name, shape, {"swizzle": m})
        if meas:
            rows.append({"swizzle": m, "source": "measured", "time (ms)": meas.time_ns / 1e6, "chosen": m == mode,
                         "ldmatrix conflicts": None})
    df = pd.DataFrame(rows, columns=["swizzle", "source", "time (ms)", "chosen", "ldmatrix conflicts"])
    with left:
        chart = alt.Chart(df).mark_bar().encode(
            x=alt.X("swizzle:N", sort=list(modes), axis=alt.Axis(labelAngle=0)),
            xOffset=alt.XOffset("source:N", sort=["predicted", "measured"]), y=alt.Y("time (ms):Q"),
            color=alt.Color("source:N", scale=alt.Scale(domain=["predicted", "measured"],
                                                        range=["#4c78a8", "#f58518"]),
                            legend=alt.Legend(orient="top")),
            opacity=alt.condition("datum.chosen", alt.value(1.0), alt.value(0.35)),
            tooltip=["swizzle", "source", alt.Tooltip("time (ms):Q", format=".3f"), "ldmatrix conflicts"])
        st.altair_chart(chart.properties(height=320), width="stretch")
        st.caption(f"{name} at {' x '.join(map(str, shape))}: predicted (blue) and, where the twin was run with that "
                   "layout, measured on the H100 (orange). The bars of the chosen layout are solid.")
    with right:
        pred = df[df["source"] == "predicted"].set_index("swizzle")["time (ms)"]
        if mode is None:
            st.warning(f"{layout.describe()} is not one of the kernel's layouts ({', '.join(map(str, modes))}); "
                       "the bars show those.")
        elif mode in errors:
            st.error(f"{name} with the {mode} layout: {errors[mode]}")
        elif mode in pred:
            t = float(pred[mode])
            st.metric("predicted kernel time", f"{t:.3f} ms")
            if "none" in pred and mode != "none":
                st.markdown(f"{name} runs **{float(pred['none']) / t:.2f}x** as fast with the {mode} layout as "
                            f"unswizzled ({float(pred['none']):.3f} ms).")
        else:
            st.info(f"{name} does not offer the {mode} layout (its choices: {', '.join(map(str, modes))}).")


def main() -> None:
    tile, layout, access, width = controls()
    try:
        a = banks.analyse(tile, layout, access, width)
    except ValueError as e:
        st.error(f"**This combination is impossible:** {e}")
        st.caption("Change the tile, the access or the layout above.")
        return
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("bank conflicts", a.conflicts, help="wavefronts minus the conflict-free count, as ncu's "
                                                 "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld")
    m2.metric("wavefronts", a.wavefronts)
    m3.metric("conflict-free wavefronts", a.ideal, help="one per phase: a phase is the group of lanes served "
                                                         "together (32 lanes for 4-byte loads, 16 for 8-byte, "
                                                         "8 for 16-byte loads and for each ldmatrix matrix)")
    m4.metric("slowdown of this instruction", f"{a.wavefronts / a.ideal:.1f}x")
    left, right = st.columns([3, 2])
    with left:
        st.subheader("Banks, wavefront by wavefront", divider="gray")
        st.altair_chart(heatmap(a), width="stretch")
    with right:
        st.subheader("How to read it", divider="gray")
        st.markdown(
            f"Each column is a bank, each row a wavefront (one pass of the shared-memory pipe, one cycle). A cell "
            f"names the lanes whose word that bank delivers in that pass. This instruction has "
            f"**{len(a.phases)} phase(s)** of {a.phases[0][1] - a.phases[0][0] + 1} lanes; each phase needs as "
            f"many wavefronts as its most crowded bank has distinct words.")
        if a.conflicts:
            worst = max(a.phases, key=lambda p: p[2])
            st.markdown(f"Lanes {worst[0]}-{worst[1]} need **{worst[2]} wavefronts**: several of their words sit in "
                        f"the same bank. Try **XOR 128B**: it XORs the 16-byte chunk index with the row index, so "
                        f"eight rows that start in the same bank land in eight different chunks.")
        else:
            st.markdown("No bank is asked for two different words in one phase: **conflict-free**. Lanes that "
                        "read the same word share it (broadcast).")
    left, right = st.columns([3, 2])
    with left:
        st.subheader("The tile's banks", divider="gray")
        st.altair_chart(tile_picture(tile, layout, a.access), width="stretch")
        per_word = max(tile.geo.word_bytes // tile.element_bytes, 1)
        words = -(-tile.cols // per_word)
        shown_rows, shown_words = min(tile.rows, banks.TILE_MAX_ROWS), min(words, banks.TILE_MAX_WORDS)
        st.caption(f"All {tile.rows} rows and {words} words per row shown." if (shown_rows, shown_words) ==
                   (tile.rows, words) else
                   f"Showing rows 0-{shown_rows - 1} of {tile.rows} and words 0-{shown_words - 1} of {words} per "
                   "row; the lane-by-lane table below has every address.")
    with right:
        st.subheader("What the layout did", divider="gray")
        st.markdown(
            "Each cell is one 4-byte word of the tile, drawn where it sits *logically* (row, column) and coloured "
            "by the bank it is *stored* in. Bright cells with numbers are the words this instruction reads. "
            "Without a swizzle, a row of 128 bytes covers all 32 banks once, so a column of words is a column of "
            "one colour: all in one bank. Padding shifts each row by a few banks; an XOR swizzle permutes 16-byte "
            "chunks differently in each row.")
        if access == "wgmma operand" and layout.kind == "none":
            st.info("wgmma's no-swizzle mode expects the *interleaved* layout (each 8x16-byte core matrix as 128 "
                    "contiguous bytes), which is conflict-free by construction; this is the row-major tile a plain "
                    "copy would produce.")
    with st.expander("Lane by lane"):
        st.dataframe(pd.DataFrame({
            "lane": range(tile.geo.lanes), "row": a.access.rows, "column": a.access.cols,
            "byte address": a.addresses, "first bank": a.addresses // tile.geo.word_bytes % tile.geo.banks,
            "served in wavefront": a.lane_wavefront}), hide_index=True, width="stretch")
    effect_on_time(tile, layout)


main()
