"""gpusim's app: ``streamlit run app.py``. Six pages, all driven by the simulator the CLI uses."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from gpusim.app import catalog

PAGES = Path(__file__).resolve().parent / "gpusim" / "app" / "pages"

st.set_page_config(page_title="gpusim: an H100 in your browser", page_icon=":material/memory:", layout="wide")

configs = catalog.config_choices()
label = st.sidebar.selectbox("GPU config", list(configs), key="config",
                             help="The hardware description the simulator runs (configs/*.toml). The H200 is the "
                                  "H100's die with faster, larger HBM3e and the same SM.")
st.session_state["config_path"] = configs[label]
st.sidebar.caption("Every number in a config names its source: datasheet, guide, or our own H100 "
                   "microbenchmark in validate/.")

nav = st.navigation([
    st.Page(PAGES / "swizzle_lab.py", title="Swizzle lab", icon=":material/grid_on:", url_path="swizzle",
            default=True),
    st.Page(PAGES / "pipeline_lab.py", title="Pipeline lab", icon=":material/view_timeline:",
            url_path="pipeline"),
    st.Page(PAGES / "ladder.py", title="Ladder", icon=":material/stairs:", url_path="ladder"),
    st.Page(PAGES / "explorer.py", title="Kernel explorer", icon=":material/query_stats:", url_path="explorer"),
    st.Page(PAGES / "sweep.py", title="Sweep", icon=":material/tune:", url_path="sweep"),
    st.Page(PAGES / "your_kernel.py", title="Your kernel", icon=":material/code:", url_path="your-kernel"),
])
nav.run()
