"""How the measurement scripts launch each CUDA twin: grid, block, dynamic shared memory, arguments and defines, for a
measured row (kernel, shape, params, defines). ``gpusim validate`` uses it to send every twin without Hopper-only
instructions through the CUDA front-end (``gpusim run FILE.cu``) and compare with the H100 and with the hand IR.

Each entry follows its script: ``run_h100.py`` (the FP32 ladder: Boehm's grid and block per rung,
``validate/kernels/README.md``), ``run_membound.py`` (the memory-bound twins), ``run_tc_sm80.py`` (mma.sync GEMMs and
FlashAttention-2: ``launch_geometry``). Tensor contents matter only where an address depends on them (the gather's
index permutation, written as the script writes it).
"""

from __future__ import annotations

import math

from dataclasses import dataclass

KERNELS = "validate/kernels"
SGEMM = {  # (rows of C per CTA, columns of C per CTA, threads), grid (N/cols, M/rows) unless noted
    "sgemm_naive": (32, 32, (32, 32, 1)), "sgemm_coalesced": (32, 32, (1024, 1, 1)),
    "sgemm_smem_blocking": (32, 32, (1024, 1, 1)), "sgemm_1d_blocktiling": (64, 64, (512, 1, 1)),
    "sgemm_2d_blocktiling": (128, 128, (256, 1, 1)), "sgemm_vectorized": (128, 128, (256, 1, 1)),
    "sgemm_bank_linearized": (128, 128, (256, 1, 1)), "sgemm_bank_padded": (128, 128, (256, 1, 1)),
    "sgemm_autotuned": (128, 128, (256, 1, 1)), "sgemm_warptiling": (128, 128, (128, 1, 1)),
    "sgemm_double_buffered": (128, 256, (256, 1, 1)), "sgemm_memcpy_async": (128, 128, (128, 1, 1)),
}
# run_fp32_knobs.py: the tile sizes its knob rows override (as -D defines)
KNOB_DEFAULTS = {"sgemm_1d_blocktiling": {"BM": 64, "BN": 64, "BK": 8, "TM": 8},
                 "sgemm_2d_blocktiling": {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8}}
# the twins whose grid is (M/32, N/32): Boehm's first kernels index rows by blockIdx.x
ROW_MAJOR_GRID = ("sgemm_naive", "sgemm_coalesced", "sgemm_smem_blocking")
STREAM = ("mem_copy", "mem_scale", "mem_add", "mem_triad")
TRANSPOSES = ("mem_transpose_naive", "mem_transpose_shared", "mem_transpose_padded", "mem_transpose_swizzled",
              "mem_transpose_naive_guarded", "mem_transpose_padded_guarded")
REDUCTIONS = {"mem_reduce_interleaved": 256, "mem_reduce_sequential": 256, "mem_reduce_shuffle": 1024}
# the Hopper twin gpusim validate --frontend does not send through the front-end: hgemm_persistent's producer runs a
# loop over its tiles around the k-loop (two nested loops per role: not summarised). hgemm_ws, hgemm_ws_cluster (the
# cluster's CTAs emulated together) and fa3 go through (gpusim/frontend/hopper_lower.py: roles lowered apart and
# joined; fa3's causal rows with each CTA's trips in every role)
HOPPER_ONLY = ("hgemm_persistent",)
TMA_STAGE_BYTES = (128 + 128) * 128  # hgemm_tma_wgmma: a stage's A and B tiles (128 rows x 128 B each)
FA_DEFAULT_TILES = {64: (128, 128), 128: (128, 64)}  # head dim -> (br, bc), as run_tc_sm80.fa_defaults
# the irregular twins (run_irregular.py; no hand IR): CSR SpMV, histograms, block scans, a stencil with border guards
IRREGULAR = ("spmv_csr", "histogram", "histogram_aggregated", "block_scan", "block_scan_padded", "stencil5")
SPMV_THREADS = 256
SPMV_SCATTER = 2654435761  # scattered columns: col[j] = j * this mod ncols (odd: a permutation of each ncols run)
HIST_GRID = 1056  # 8 CTAs of 256 threads on each of the H100's 132 SMs, a grid-stride loop over the input
HIST_BINS = {"uniform": "randint(0,256)", "one": "const(7)"}
SCAN_SEGMENT, SCAN_THREADS = 1024, 512


@dataclass(frozen=True)
class TwinLaunch:
    source: str
    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    args: tuple[str, ...]
    smem_dynamic: int = 0
    defines: tuple[str, ...] = ()
    compiler: str = ""  # how the measured binary was built, where not NVRTC as CuPy's RawModule ("nvcc")


def launch_of(kernel: str, shape: tuple[int, ...], params: dict | None = None,
              defines: dict | list | None = None) -> TwinLaunch | None:
    """The launch of a measured twin row, or None for a twin the front-end does not take (Hopper-only)."""
    params = params or {}
    src = f"{KERNELS}/{kernel}.cu"
    if kernel in HOPPER_ONLY:
        return None
    if kernel in IRREGULAR:
        return irregular_launch(kernel, shape, params)
    if kernel in SGEMM:
        M, N, K = shape
        rows, cols, block = SGEMM[kernel]
        tiles = ()
        if params and kernel in KNOB_DEFAULTS:  # run_fp32_knobs.py: tile sizes as -D defines
            t = KNOB_DEFAULTS[kernel] | {k: int(v) for k, v in params.items()}
            rows, cols = t["BM"], t["BN"]
            per_thread = t["TM"] * t.get("TN", 1)
            block = (t["BM"] * t["BN"] // per_thread, 1, 1)
            tiles = tuple(f"{k}={v}" for k, v in t.items())
        grid = (M // rows, N // cols, 1) if kernel in ROW_MAJOR_GRID else (N // cols, M // rows, 1)
        return TwinLaunch(src, kernel, grid, block, (f"M={M}", f"N={N}", f"K={K}", "alpha=1.0", f"A=f32[{M * K}]",
                                                     f"B=f32[{K * N}]", "beta=0.0", f"C=f32[{M * N}]"), 0, tiles)
    if kernel in STREAM:
        (n,) = shape
        v = n // 4
        t = f"f32[{n}]"
        args = {"mem_copy": (f"x={t}", f"y={t}"), "mem_scale": (f"x={t}", f"y={t}", "s=3.0"),
                "mem_add": (f"a={t}", f"b={t}", f"c={t}"), "mem_triad": (f"a={t}", f"b={t}", f"c={t}", "s=3.0")}[kernel]
        return TwinLaunch(src, kernel, (v // 256, 1, 1), (256, 1, 1), args)
    if kernel in TRANSPOSES:
        (n,) = shape
        g = -(-n // 32)
        return TwinLaunch(src, kernel, (g, g, 1), (32, 8, 1), (f"in=f32[{n * n}]", f"out=f32[{n * n}]", f"n={n}"))
    if kernel in REDUCTIONS:
        (n,) = shape
        per = REDUCTIONS[kernel]
        return TwinLaunch(src, kernel, (n // per, 1, 1), (256, 1, 1), (f"in=f32[{n}]", f"out=f32[{n // per}]"))
    if kernel == "mem_strided":
        (n,) = shape
        st = int(params.get("stride", 1))
        return TwinLaunch(src, kernel, (n // 256, 1, 1), (256, 1, 1), (f"x=f32[{n * st}]", f"y=f32[{n}]",
                                                                         f"stride={st}"))
    if kernel == "mem_gather":
        (n,) = shape
        return TwinLaunch(src, kernel, (n // 256, 1, 1), (256, 1, 1),
                          (f"x=f32[{n}]", f"idx=u32[{n}]:mulmod(2654435761,{n})", f"y=f32[{n}]"))
    defs = defines if isinstance(defines, dict) else dict(d.lstrip("-D").split("=", 1) for d in (defines or ()))
    if kernel.startswith("hgemm_mma"):
        M, N, K = shape
        stages = int(defs.get("STAGES", 1))
        return TwinLaunch(src, kernel, (N // 128, M // 128, 1), (256, 1, 1),
                          (f"M={M}", f"N={N}", f"K={K}", f"A=u16[{M * K}]", f"B=u16[{N * K}]",
                           f"C=u16[{M * N}]"), stages * 32768, tuple(f"{k}={v}" for k, v in defs.items()))
    if kernel == "hgemm_tma_wgmma":  # run_tc_sm90.py: tensor maps by value, dims {K, rows}, box {SWIZZLE/2, 128}
        M, N, K = shape
        stages, swz = int(defs.get("STAGES", 1)), int(defs.get("SWIZZLE", 128))
        box = f"[{swz // 2},128],swizzle={swz}"
        return TwinLaunch(src, kernel, (N // 128, M // 128, 1), (128, 1, 1),
                          (f"tmap(A,bf16,[{K},{M}],{box})", f"tmap(B,bf16,[{K},{N}],{box})", f"bf16[{M * N}]",
                           str(M), str(N), str(K)), stages * TMA_STAGE_BYTES + 1024 + 128,
                          tuple(f"{k}={v}" for k, v in defs.items()))
    if kernel == "hgemm_ws":  # run_tc_sm90.py: maps by value, A boxes {SWIZZLE/2, 128}, B boxes {SWIZZLE/2, BN}
        M, N, K = shape
        stages, swz, bn = int(defs.get("STAGES", 3)), int(defs.get("SWIZZLE", 128)), int(defs.get("BN", 256))
        return TwinLaunch(src, kernel, (N // bn, M // 128, 1), (384, 1, 1),
                          (f"tmap(A,bf16,[{K},{M}],[{swz // 2},128],swizzle={swz})",
                           f"tmap(B,bf16,[{K},{N}],[{swz // 2},{bn}],swizzle={swz})", f"bf16[{M * N}]",
                           str(M), str(N), str(K)), stages * (128 + bn) * 128 + 1024 + 128,
                          tuple(f"{k}={v}" for k, v in defs.items()))
    if kernel == "hgemm_ws_cluster":  # run_tc_sm90.py: 2x1 clusters along M (blockIdx.x), maps by value, A boxes
        # {SWIZZLE/2, 128}, B boxes {SWIZZLE/2, BN/2} (each CTA's multicast half; BN without multicast)
        M, N, K = shape
        stages, swz, bn = int(defs.get("STAGES", 3)), int(defs.get("SWIZZLE", 128)), int(defs.get("BN", 256))
        b_rows = bn if defs.get("MULTICAST") == "0" else bn // 2
        return TwinLaunch(src, kernel, (M // 128, N // bn, 1), (384, 1, 1),
                          (f"tmap(A,bf16,[{K},{M}],[{swz // 2},128],swizzle={swz})",
                           f"tmap(B,bf16,[{K},{N}],[{swz // 2},{b_rows}],swizzle={swz})", f"bf16[{M * N}]",
                           str(M), str(N), str(K)), stages * (128 + bn) * 128 + 1024 + 128,
                          tuple(f"{k}={v}" for k, v in defs.items()))
    if kernel == "fa3":  # run_fa3.py: nvcc -O3 for sm_90a, 3D maps {d, N, B*H} by value, boxes {64, rows, 1}
        B, H, N, d = shape
        bc, stages, causal = int(params.get("bc", 128)), int(params.get("stages", 2)), int(params.get("causal", 0))
        kv = {t: f"tmap({t},bf16,[{d},{N},{B * H}],[64,{r},1],swizzle=128)" for t, r in (("Q", 128), ("K", bc),
                                                                                        ("V", bc))}
        smem = 1024 + 128 * d * 2 + 2 * stages * bc * d * 2 + 8 * (1 + 4 * stages)
        return TwinLaunch(src, kernel, (N // 128, H, B), (384, 1, 1),
                          (kv["Q"], kv["K"], kv["V"], f"bf16[{B * H * N * d}]", str(N),
                           f"{math.log2(math.e) / math.sqrt(d)}"),
                          smem, ("BR=128", f"BC={bc}", f"HEAD_DIM={d}", f"CAUSAL={causal}", f"STAGES={stages}",
                                 "PV_SPLIT=0", "PINGPONG=1"), compiler="nvcc")
    if kernel == "fa2":
        B, H, N, d = shape
        br, bc = FA_DEFAULT_TILES[d]
        br, bc = int(params.get("br", br) or br), int(params.get("bc", bc) or bc)
        n = B * H * N * d
        # run_tc_sm80.py fills Q, K and V with normal bf16 values: the softmax's branches (a new row maximum, the
        # -inf guards) follow them
        return TwinLaunch(src, kernel, (N // br, H, B), (128, 1, 1),
                          (f"B={B}", f"H={H}", f"N={N}", f"Q=bf16[{n}]:normal", f"K=bf16[{n}]:normal",
                           f"V=bf16[{n}]:normal", f"O=bf16[{n}]"),
                          (br + 2 * bc) * d * 2, tuple(f"{k}={v}" for k, v in defs.items()))
    return None


def irregular_launch(kernel: str, shape: tuple[int, ...], params: dict) -> TwinLaunch:
    """The irregular twins' launches, as run_irregular.py measures them. Contents that addresses depend on are given
    by formula (each twin's header says which); the others hold whatever values (measured: CuPy's random floats).

    - spmv_csr, shape (nrows, ncols, nnz per row), params cols = scattered | banded: row_ptr[i] = nnz * i; scattered
      col[j] = j * SPMV_SCATTER mod ncols; banded col[j] = (j div nnz + j mod nnz - nnz / 2) mod ncols, with the
      distribution divmod(d,a,b,c,m): element i holds ((i div d) * a + (i mod d) * b + c) mod m.
    - histogram, histogram_aggregated, shape (n,), params bins = uniform (randint(0,256)) | one (const(7)).
    - block_scan, block_scan_padded, shape (n,): n / 1024 segments; stencil5, shape (n,): an n x n grid.
    """
    src = f"{KERNELS}/{kernel}.cu"
    if kernel == "spmv_csr":
        nrows, ncols, nnz = shape
        cols = {"scattered": f"mulmod({SPMV_SCATTER},{ncols})",
                "banded": f"divmod({nnz},1,1,{-(nnz // 2)},{ncols})"}[str(params.get("cols", "scattered"))]
        return TwinLaunch(src, kernel, (-(-nrows // SPMV_THREADS), 1, 1), (SPMV_THREADS, 1, 1),
                          (f"nrows={nrows}", f"row_ptr=i32[{nrows + 1}]:arange({nnz})",
                           f"col=i32[{nrows * nnz}]:{cols}", f"val=f32[{nrows * nnz}]", f"x=f32[{ncols}]",
                           f"y=f32[{nrows}]"))
    if kernel in ("histogram", "histogram_aggregated"):
        (n,) = shape
        bins = HIST_BINS[str(params.get("bins", "uniform"))]
        return TwinLaunch(src, kernel, (HIST_GRID, 1, 1), (256, 1, 1),
                          (f"in=i32[{n}]:{bins}", "hist=u32[256]:zeros", f"n={n}"))
    if kernel in ("block_scan", "block_scan_padded"):
        (n,) = shape
        return TwinLaunch(src, kernel, (n // SCAN_SEGMENT, 1, 1), (SCAN_THREADS, 1, 1),
                          (f"in=f32[{n}]:uniform(0,1)", f"out=f32[{n}]"))
    (n,) = shape  # stencil5
    g = -(-n // 32)
    return TwinLaunch(src, kernel, (g, g, 1), (32, 8, 1), (f"in=f32[{n * n}]:uniform(0,1)", f"out=f32[{n * n}]",
                                                           f"n={n}"))
