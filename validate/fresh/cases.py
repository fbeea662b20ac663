"""Kernels of kinds no twin, IR or model change was shaped around, written as a new user writes them, each with the
launch `gpusim run` takes. Their predictions are committed (``predicted-*.json``, `python validate/fresh/check.py
--predict`) before they are measured on the H100 (`python3 validate/run_fresh.py`), so the error is a new user's.

Batches (``BATCHES``): the first (``CASES``, predicted-2026-11-28.json, measured on the H100), ``atomics``
(``ATOMIC_CASES``: kernels a learner writes with global atomics, predicted-atomics-2026-11-28.json, measured on an
H200), ``reach`` (``REACH_CASES``: what the front-end took in on 2026-12-07) and ``passes`` (``PASSES_CASES``: row
kernels that read each row two or three times), each predicted in ``predicted-BATCH-DATE.json`` before it was measured
on the H100. A case's ``kernel`` is the function in ``validate/fresh/KERNEL.cu`` (the case's ``name`` where not given).

A case the front-end refuses keeps its refusal line under ``refused``: it is measured, not predicted.

Each case: name (the kernel function, and ``NAME.cu`` here), grid, block, and the ``--arg`` texts (tensors with
their contents as gpusim's front-end generates them, scalars); ``scalars`` types the scalars that are not ``int``.
"""

N = 1 << 24  # floats: 64 MiB per tensor, larger than the L2

CASES = [
    {"name": "warp_reduce", "grid": (1056,), "block": (256,),
     "args": (f"x=f32[{N}]", "out=f32[1]:zeros", f"n={N}")},
    {"name": "localarr", "grid": (4096,), "block": (256,),
     "args": ("x=f32[1048576]", "y=f32[1048576]", "n=1048576")},
    {"name": "conv1d", "grid": (N // 256,), "block": (256,),
     "args": (f"x=f32[{N}]", "w=f32[17]", f"y=f32[{N}]", f"n={N}")},
    {"name": "sfu_mix", "grid": (N // 256,), "block": (256,),
     "args": (f"x=f32[{N}]:uniform(0,1)", f"y=f32[{N}]", f"n={N}")},
    {"name": "int_hash", "grid": (N // 256,), "block": (256,),
     "args": (f"x=u32[{N}]", f"y=u32[{N}]", f"n={N}", "rounds=16")},
    {"name": "scatter_add", "grid": (16384,), "block": (256,),
     "args": ("idx=i32[4194304]:randint(0,65536)", "val=f32[4194304]", "out=f32[65536]:zeros", "n=4194304")},
    {"name": "bitonic_shared", "grid": (4096,), "block": (256,),
     "args": ("x=f32[4194304]", "y=f32[4194304]")},
    {"name": "daxpy", "grid": (N // 256,), "block": (256,),
     "args": ("a=2.0", f"x=f64[{N}]", f"y=f64[{N}]", f"n={N}"), "scalars": {"a": "f64"}},
    {"name": "warp_scan", "grid": (N // 4 // 256,), "block": (256,),
     "args": (f"x=f32[{N}]", f"y=f32[{N}]", f"n4={N // 4}")},
    {"name": "rmsnorm", "grid": (8192,), "block": (256,),
     "args": ("x=f32[8192*4096]", "w=f32[4096]", "y=f32[8192*4096]", "cols4=1024", "eps=1e-6"),
     "scalars": {"eps": "f32"}},
]

# Global atomics as a learner writes them: a counter or a few words hammered by every CTA (the L2 applies one line's
# atomics one request at a time), a histogram over few bins and over many. Sizes: each runs about 0.1-3 ms on an
# H100 where the atomics serialize; measured on an H200 (whose HBM is 1.4x the H100's: the rows whose atomics do not
# dominate say so in the measurement's ``how``).
HIST_GRID = (132 * 8,)  # a grid-stride loop: 8 blocks of 256 per SM
ATOMIC_CASES = [
    *[{"name": f"compact_{n.bit_length() - 1}", "kernel": "compact", "grid": (n // 256,), "block": (256,),
       "args": (f"x=f32[{n}]:uniform(0,1)", f"out=f32[{n}]", "count=u32[1]:zeros", "t=0.5", f"n={n}"),
       "scalars": {"t": "f32"}} for n in (1 << 22, 1 << 24)],
    {"name": "hist_global_uniform", "kernel": "hist_global", "grid": HIST_GRID, "block": (256,),
     "args": (f"in=u32[{N}]:randint(0,256)", "hist=u32[256]:zeros", f"n={N}")},
    {"name": "hist_global_one", "kernel": "hist_global", "grid": HIST_GRID, "block": (256,),
     "args": ("in=u32[1048576]:const(7)", "hist=u32[256]:zeros", "n=1048576")},
    {"name": "dot_atomic", "grid": (4096,), "block": (256,),
     "args": ("x=f32[1048576]", "y=f32[1048576]", "out=f32[1]:zeros", "n=1048576")},
    {"name": "hist_wide", "grid": HIST_GRID, "block": (256,),
     "args": (f"in=u32[{N}]:randint(0,65536)", "hist=u32[65536]:zeros", f"n={N}")},
    {"name": "block_sum_mod", "grid": (N // 256,), "block": (256,),
     "args": (f"x=f32[{N}]", "out=f32[64]:zeros", f"n={N}")},
    {"name": "last_block", "grid": (N // 256,), "block": (256,),
     "args": (f"x=f32[{N}]", f"partial=f32[{N // 256}]", "retired=u32[1]:zeros", "out=f32[1]:zeros", f"n={N}"),
     # __threadfence() on sm_90 is MEMBAR + CGAERRBAR; measured, not predicted (gpusim run, 2026-11-28, rc 2); the
     # front-end takes it since (CGAERRBAR: the error barrier of a CTA's cluster of one), so check.py --now tries it:
     "refused": "gpusim: error: 0x02d0 'CGAERRBAR': unsupported instruction CGAERRBAR: thread-block clusters "
                "(barrier.cluster, distributed shared memory) need the cluster's CTAs emulated together: not "
                "supported yet (see docs/your-kernel.md for what the front-end emulates)"},
]

# What the front-end took in on 2026-12-07 (a switch's BREAK and subroutines after the store, __constant__ and
# __device__ variables, __dp4a, an atomicCAS loop, interior blocks that alternate, a three-pass row kernel), written
# as a new user writes them: predicted (predicted-reach-2026-12-07.json) before they are measured.
REACH_CASES = [
    {"name": "switch_ops", "grid": (N // 256,), "block": (256,),
     "args": (f"op=i32[{N}]:randint(0,8)", f"a=f32[{N}]", f"b=f32[{N}]", f"c=f32[{N}]", f"n={N}")},
    {"name": "conv2d_tiled", "grid": (256, 256), "block": (16, 16),
     "args": (f"in=f32[{4096 * 4096}]", f"out=f32[{4096 * 4096}]", "w=4096", "h=4096")},
    {"name": "count_positive", "grid": (N // 256,), "block": (256,), "args": (f"x=f32[{N}]", f"n={N}")},
    {"name": "dp4a_dot", "grid": (132 * 8,), "block": (256,),
     "args": (f"a=i32[{N}]:randint(0,2147483647)", f"b=i32[{N}]:randint(0,2147483647)", "out=i32[1]:zeros",
              f"n4={N}")},
    {"name": "cas_max", "grid": (4096,), "block": (256,), "args": ("x=f32[1048576]", "m=f32[1]:zeros", "n=1048576")},
    {"name": "layernorm3", "grid": (8192,), "block": (256,),
     "args": (f"x=f32[{8192 * 4096}]", "w=f32[4096]", "b=f32[4096]", f"y=f32[{8192 * 4096}]", "cols=4096",
              "eps=1e-5"), "scalars": {"eps": "f32"}},
]

# Row kernels that read each row two or three times (a norm's or a softmax's passes), at row lengths where one wave's
# rows fit in the L2 and where they do not: the L2 holds a row between its passes only while the wave's rows fit.
# Predicted (predicted-passes-2026-12-08.json) before they are measured.
PASSES_CASES = [
    *[{"name": f"layernorm3_{cols}", "kernel": "layernorm3", "grid": (rows,), "block": (256,),
       "args": (f"x=f32[{rows * cols}]", f"w=f32[{cols}]", f"b=f32[{cols}]", f"y=f32[{rows * cols}]", f"cols={cols}",
                "eps=1e-5"), "scalars": {"eps": "f32"}}
      for rows, cols in ((4096, 8192), (2048, 16384), (1024, 32768))],
    *[{"name": f"softmax3_{cols}", "kernel": "softmax3", "grid": (rows,), "block": (256,),
       "args": (f"x=f32[{rows * cols}]", f"y=f32[{rows * cols}]", f"cols={cols}")}
      for rows, cols in ((8192, 2048), (2048, 16384))],
    *[{"name": f"center_rows_{cols}", "kernel": "center_rows", "grid": (rows,), "block": (128,),
       "args": (f"x=f32[{rows * cols}]", f"cols4={cols // 4}")}
      for rows, cols in ((8192, 4096), (2048, 32768))],
    {"name": "rmsnorm_16384", "kernel": "rmsnorm", "grid": (2048,), "block": (256,),
     "args": ("x=f32[2048*16384]", "w=f32[16384]", "y=f32[2048*16384]", "cols4=4096", "eps=1e-6"),
     "scalars": {"eps": "f32"}},
]

BATCHES = {"2026-11-28": CASES, "atomics": ATOMIC_CASES, "reach": REACH_CASES, "passes": PASSES_CASES}
FIRST = "2026-11-28"  # the batch the scripts take when none is named


def kernel_of(case: dict) -> str:
    """The kernel function (and ``validate/fresh/KERNEL.cu``) a case launches."""
    return case.get("kernel", case["name"])
