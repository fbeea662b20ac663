// The matrix transposes of docs/authoring.md: out = in^T for an N x N float matrix, 32x32 tiles,
// 32x8 threads per block, each thread moving 4 elements (rows ty, ty+8, ty+16, ty+24 of the tile).
// IR: examples/transpose_naive.py, transpose_shared.py, transpose_padded.py.
#define TILE 32
#define ROWS 8

__global__ void transpose_naive(const float* __restrict__ in, float* __restrict__ out, int n) {
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  for (int k = 0; k < TILE; k += ROWS) out[x * n + y + k] = in[(y + k) * n + x];
}

#ifndef PAD
#define PAD 0
#endif

__global__ void transpose_shared(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float tile[TILE][TILE + PAD];
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  for (int k = 0; k < TILE; k += ROWS) tile[threadIdx.y + k][threadIdx.x] = in[(y + k) * n + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;  // transposed block offset
  y = blockIdx.x * TILE + threadIdx.y;
  for (int k = 0; k < TILE; k += ROWS) out[(y + k) * n + x] = tile[threadIdx.x][threadIdx.y + k];
}

// Any N: the last block of each grid dimension is partial, every access behind a bounds guard (step 4 of
// docs/authoring.md). nvcc predicates the loads and stores (@P LDG / @P STG): every warp issues them.
__global__ void transpose_guarded(const float* __restrict__ in, float* __restrict__ out, int n) {
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  for (int k = 0; k < TILE; k += ROWS)
    if (x < n && y + k < n) out[x * n + y + k] = in[(y + k) * n + x];
}
