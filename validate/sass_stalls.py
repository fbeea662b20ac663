"""The control codes' stall cycles per instruction in the attention twins' KV loops, by the IR bundle that stands
for each SASS instruction: ``fp32`` (the softmax bundle), ``sfu`` (exp2), ``other`` (``sass_rest``: address, loop
control, conversions); the tensor, memory and synchronisation instructions are timed by their own units and left
out. Prints the tables `kernels_ir/attention.py` holds (SASS_FA2_STALLS, SASS_FA3_STALLS), and for the FP32 rungs'
main loops (SASS_FP32_STALLS, `kernels_ir/sgemm.py`) the means of the memory instructions, the FP32 arithmetic and
the rest, and their FFMA's mean register-file reads (SASS_FFMA_READS: sources not served by the operand reuse cache).

    python validate/sass_stalls.py        # nvcc and cuobjdump (pip install -e '.[sass]'), no GPU

Built as `gpusim sass` builds (local nvcc, sm_90a), the builds the IR's loop sizes come from (SASS_FA3_LOOP); the
loop's path is the one `gpusim sass` reckons (every forward branch taken, the masking blocks skipped). For fa2 at
d=128 the measured binary's SASS (NVRTC, validate/measurements/h100/diagnostics/fa2_HEAD_DIM128_CAUSAL0-nvrtc.sass)
gives the same loop, instruction for instruction.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from gpusim import sass  # noqa: E402

CLASSES = {"fp32": ("FFMA", "FADD", "FMUL", "FMNMX", "FSETP", "FSEL", "F2FP"), "sfu": ("MUFU",)}
TIMED = ("HMMA", "HGMMA", "LDSM", "LDGSTS", "LDS", "STS", "LDG", "STG", "BAR", "SYNCS", "UTMALDG", "WARPGROUP",
         "SHFL", "DEPBAR")  # timed by the pipe, memory or synchronisation unit the IR gives them


def main_loop(cu: str, defines: tuple[str, ...] = ()) -> list:
    """The path `gpusim sass` reckons through the twin's biggest loop (local nvcc, sm_90a)."""
    funcs = sass.compile_and_dump(REPO / cu, "sm_90a", defines)
    return max((lb for f in funcs for lb in sass.loops(f)), key=lambda lb: len(lb.insts)).taken_path()


def loop_means(cu: str, defines: tuple[str, ...]) -> tuple[float, float, float]:
    m = sass.stall_means(main_loop(cu, defines), CLASSES, TIMED)
    return tuple(round(m[c][1], 2) for c in ("fp32", "sfu", "other"))


FP32_CLASSES = {"mem": ("LDS", "LDG", "STS", "LDGSTS"), "fp32": ("FFMA", "FADD", "FMUL")}
FP32_SKIP = ("BAR", "DEPBAR", "LDGDEPBAR", "BRA")  # synchronisation and the loop's branch: their own operations
FP32_RUNGS = ("sgemm_naive", "sgemm_coalesced", "sgemm_smem_blocking", "sgemm_1d_blocktiling", "sgemm_2d_blocktiling",
              "sgemm_vectorized", "sgemm_bank_padded", "sgemm_bank_linearized", "sgemm_autotuned", "sgemm_warptiling",
              "sgemm_double_buffered", "sgemm_memcpy_async")


# BK: the trip count of a rolled dotIdx loop (the twins that keep the public kernels' code: 7, 8, 9 and 11)
DOT_TRIPS = {"sgemm_bank_linearized": 8, "sgemm_bank_padded": 8, "sgemm_autotuned": 16, "sgemm_double_buffered": 16}


def fp32_path(cu: str) -> list:
    """An FP32 rung's main loop as executed: the path `gpusim sass` reckons through a fully unrolled loop; where
    the loop holds inner loops (the rolled dotIdx loops of the twins in DOT_TRIPS), its instructions outside them
    once and each inner loop's DOT_TRIPS times."""
    funcs = sass.compile_and_dump(REPO / cu, "sm_90a", ())
    lbs = [lb for f in funcs for lb in sass.loops(f)]
    big = max(lbs, key=lambda lb: len(lb.insts))
    inner = [lb for lb in lbs if lb is not big and set(map(id, lb.insts)) <= set(map(id, big.insts))]
    if not inner:
        return big.taken_path()
    inside = {id(x) for lb in inner for x in lb.insts}
    trips = DOT_TRIPS[Path(cu).stem]
    return [x for x in big.insts if id(x) not in inside] + [x for lb in inner for x in lb.insts] * trips


def fp32_means(path: list) -> tuple[float, float, float]:
    """An FP32 rung's main loop: mean control-code stalls of its memory instructions (the IR's Mem operations),
    its FP32 arithmetic and the rest (integer and address work, the IR's int32 bundles)."""
    m = sass.stall_means(path, FP32_CLASSES, FP32_SKIP)
    return tuple(round(m[c][1], 2) for c in ("mem", "fp32", "other"))


def ffma_reads(path: list) -> float:
    """An FP32 rung's main loop: the mean register-file reads of its FFMA (sources not from the reuse cache)."""
    ffma = [x for x in path if x.mnemonic == "FFMA"]
    return round(sum(x.register_reads for x in ffma) / max(len(ffma), 1), 2)


def main() -> int:
    fa2 = {(d, bool(c)): loop_means("validate/kernels/fa2.cu", (f"HEAD_DIM={d}", f"CAUSAL={c}"))
           for d in (64, 128) for c in (0, 1)}
    fa3 = {(d, bc, c): loop_means("validate/kernels/fa3.cu", ("BR=128", f"BC={bc}", f"HEAD_DIM={d}", f"CAUSAL={c}",
                                                               "STAGES=2", "PV_SPLIT=0", "PINGPONG=1"))
           for c in (0, 1) for d in (64, 128) for bc in (64, 128, 176)}
    print("SASS_FA2_STALLS =", fa2)
    print("SASS_FA3_STALLS =", fa3)
    rungs = {k: fp32_path(f"validate/kernels/{k}.cu") for k in FP32_RUNGS}
    print("SASS_FP32_STALLS =", {k: fp32_means(path) for k, path in rungs.items()})
    print("SASS_FFMA_READS =", {k: ffma_reads(path) for k, path in rungs.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
