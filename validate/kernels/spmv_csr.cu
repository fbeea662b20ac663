// gpusim-twin: front-end only (no hand IR; validate/launches.py::spmv_csr)
// Sparse matrix-vector product y = A x in CSR, one thread per row (scalar CSR), 256 threads per block, grid
// ceil(nrows / 256). Row r holds row_ptr[r+1] - row_ptr[r] entries: columns col[j] and values val[j] for j in
// [row_ptr[r], row_ptr[r+1]). Each thread walks its row's entries in order, so the lanes of a warp read col and val
// 16 entries (64 B) apart and gather x at the columns.
// Contents measured (validate/run_irregular.py; i is the element index, NNZ = 16 entries per row):
//   row_ptr[i] = 16 * i                                       gpusim --arg row_ptr=i32[nrows+1]:arange(16)
//   scattered: col[j] = (j * 2654435761) mod ncols            col=i32[nrows*16]:mulmod(2654435761,ncols)
//   banded:    col[j] = (j / 16 + j % 16 - 8) mod ncols       col=i32[nrows*16]:affine2(16,1,1,-8,ncols)
//              (the 16 columns row-8 .. row+7 around the diagonal, wrapping; ncols = nrows; affine2(d,a,b,c,m):
//               element i holds ((i / d) * a + (i % d) * b + c) mod m, the result in [0, m))
//   val, x: any floats (no address depends on them); y is written.
extern "C" __global__ void spmv_csr(int nrows, const int* __restrict__ row_ptr, const int* __restrict__ col,
                                    const float* __restrict__ val, const float* __restrict__ x,
                                    float* __restrict__ y) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < nrows) {
    float sum = 0.0f;
    int end = row_ptr[row + 1];
    for (int j = row_ptr[row]; j < end; ++j) sum += val[j] * x[col[j]];
    y[row] = sum;
  }
}
