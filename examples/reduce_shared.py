"""Block reduction through shared memory (docs/authoring.md, step 4): Harris's kernel 3, "sequential
addressing". Each 256-thread block sums 256 floats: 8 halving steps, each a predicated shared load pair, an
FADD and a shared store by the threads below the stride, then ``__syncthreads()``."""

import numpy as np

from gpusim.authoring import Barrier, Compute, Kernel, Launch, Loop, Mem, Tensor, register, require_divisible

F32 = 4
THREADS = 256
STEPS = 8  # strides 128, 64, ..., 1


def _active(c, addr):
    """``addr`` for the threads below this step's stride (tid < s), an inactive lane (-1) for the others."""
    s = (THREADS // 2) >> c.j
    return np.where(c.tid < s, addr, -1)


@register("example_reduce_shared", shape_names=("N",), source="reduce.cu:reduce_shared")
def build(shape):
    (n,) = shape
    require_divisible("example_reduce_shared", "N", n, "THREADS", THREADS)
    step = (  # unrolled by ptxas (#pragma unroll): one copy per stride, all predicated on tid < s
        Compute("cmp", "int32", 1),  # ISETP tid < s
        Mem("ld_mine", "shared", "ld", F32, lambda c: _active(c, c.tid * F32), predicated=True),
        Mem("ld_other", "shared", "ld", F32, lambda c: _active(c, (c.tid + ((THREADS // 2) >> c.j)) * F32),
            predicated=True),
        Compute("add", "fp32", 1, after=("ld_mine", "ld_other")),  # FADD
        Mem("st_sum", "shared", "st", F32, lambda c: _active(c, c.tid * F32), after=("add",), predicated=True),
        Barrier(),
    )
    body = (
        Compute("addr", "int32", 6, ilp=2),
        Mem("ld_in", "global", "ld", F32, lambda c: (c.bx * THREADS + c.tid) * F32, "in", after=("addr",)),
        Mem("st_first", "shared", "st", F32, lambda c: c.tid * F32, after=("ld_in",)),
        Barrier(),
        Loop(STEPS, step, var="j"),
        Mem("ld_total", "shared", "ld", F32, lambda c: np.where(c.tid == 0, 0, -1)),
        Mem("st_out", "global", "st", F32, lambda c: np.where(c.tid == 0, c.bx * F32, -1), "out",
            after=("ld_total",)),
    )
    return Kernel("example_reduce_shared", shape,
                  Launch((n // THREADS, 1, 1), (THREADS, 1, 1), regs_per_thread=12, smem_bytes=THREADS * F32),
                  tensors=(Tensor("in", n * F32), Tensor("out", n // THREADS * F32)), loop=Loop(1, body),
                  flops=n - n // THREADS)
