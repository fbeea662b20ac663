// gpusim-twin: front-end only (no hand IR; validate/launches.py::histogram)
// 256-bin histogram of n 32-bit ints (each in 0..255): one shared-memory histogram per block, cleared, then a
// grid-stride loop over the input adds 1 to the value's bin with a shared atomicAdd (ATOMS), then each block adds
// its 256 bins to the global histogram with atomicAdd whose result is unused (RED), zero bins included.
// 256 threads per block, grid 1056 (8 blocks on each of the H100's 132 SMs); hist must be zeroed before a launch.
// Inputs measured (validate/run_irregular.py): uniform bins in=i32[n]:randint(0,256) (gpusim's page-seeded
// generator, byte for byte), or one bin in=i32[n]:const(7); hist=u32[256]:zeros.
#define BINS 256
extern "C" __global__ void histogram(const int* __restrict__ in, unsigned int* __restrict__ hist, int n) {
  __shared__ unsigned int h[BINS];
  for (int b = threadIdx.x; b < BINS; b += blockDim.x) h[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) atomicAdd(&h[in[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < BINS; b += blockDim.x) atomicAdd(&hist[b], h[b]);
}
