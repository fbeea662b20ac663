"""Kernels of kinds no twin, IR or model change was shaped around, written as a new user writes them, each with the
launch `gpusim run` takes. Their predictions are committed (``predicted-*.json``, `python validate/fresh/check.py
--predict`) before they are measured on the H100 (`python3 validate/run_fresh.py`), so the error is a new user's.

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
