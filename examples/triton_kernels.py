"""Four Triton kernels in the designs of Triton's tutorials (vector add, fused softmax, blocked matmul, layer norm),
written for gpusim: ``gpusim run examples/triton_kernels.py --kernel add --grid 16384 --arg x=f32[16777216] ...``;
the commands are in docs/your-kernel.md ("Triton kernels"). gpusim compiles each kernel for sm_90 without a GPU.
"""

import triton
import triton.language as tl


@triton.jit
def add(x, y, out, n, BLOCK_SIZE: tl.constexpr):
    """out = x + y; each program adds one block of BLOCK_SIZE elements (masked at the end)."""
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    tl.store(out + offsets, tl.load(x + offsets, mask=mask) + tl.load(y + offsets, mask=mask), mask=mask)


@triton.jit
def softmax(out, inp, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    """Row-wise softmax, one row per program: the row is read once, kept in registers (BLOCK_SIZE >= n_cols, a power
    of two), reduced twice (max, then the sum of exponentials) and written once."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(inp + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    den = tl.sum(num, axis=0)
    tl.store(out + row * out_row_stride + cols, num / den, mask=mask)


@triton.jit
def matmul(a, b, c, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """C = A @ B, one BLOCK_M x BLOCK_N tile of C per program (program_id(0) walks N, program_id(1) walks M, so
    neighbouring programs share their A tile), the K dimension walked BLOCK_K at a time into an fp32 accumulator
    (tl.dot), the result stored in C's dtype."""
    pid_n = tl.program_id(axis=0)
    pid_m = tl.program_id(axis=1)
    rm = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    rn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    rk = tl.arange(0, BLOCK_K)
    a_tile = a + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_tile = b + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a_blk = tl.load(a_tile, mask=rk[None, :] < K - k * BLOCK_K, other=0.0)
        b_blk = tl.load(b_tile, mask=rk[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a_blk, b_blk, acc)
        a_tile += BLOCK_K * stride_ak
        b_tile += BLOCK_K * stride_bk
    out = acc.to(c.dtype.element_ty)
    cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_tile = c + cm[:, None] * stride_cm + cn[None, :] * stride_cn
    tl.store(c_tile, out, mask=(cm[:, None] < M) & (cn[None, :] < N))


@triton.jit
def layernorm(x, y, w, b, stride, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    """Layer norm of one row per program, as Triton's layer-norm tutorial's forward pass: three passes over the row in
    blocks of BLOCK_SIZE (the mean, the variance, then the normalised row scaled by w and shifted by b), the row read
    three times (from HBM once, then from the L2 if it is still there) and written once."""
    row = tl.program_id(0)
    x += row * stride
    y += row * stride
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, n_cols, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(x + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / n_cols
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, n_cols, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        v = tl.load(x + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        v = tl.where(cols < n_cols, v - mean, 0.0)
        acc += v * v
    rstd = 1 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for off in range(0, n_cols, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        v = tl.load(x + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y + cols, (v - mean) * rstd * tl.load(w + cols, mask=mask) + tl.load(b + cols, mask=mask), mask=mask)
