"""The Streamlit app's logic, as pure functions (no Streamlit here; the pages live in ``gpusim/app/pages``).

``catalog``  registered kernels, their knobs and default shapes, configs, one guarded prediction
``banks``    the swizzle lab: lane addresses of a warp instruction on a shared-memory tile, wavefronts
``timeline`` the simulated trace of one SM as Gantt bars
``pipeline`` shared memory and occupancy against the stage count
``ladder``   predictions beside measurements, the roofline, and why one rung beats the one below
"""
