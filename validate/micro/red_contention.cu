// Global reductions (atomicAdd whose result is unused: REDG.E.ADD) from a whole grid onto a few words, and the
// histogram twin with and without its final reductions (validate/kernels/histogram.cu). run_red_contention.py.
// red_words: thread t of every CTA adds 1 to word (t % words) * stride, `rounds` times (rounds = 0: the launch alone).
extern "C" __global__ void red_words(unsigned int* __restrict__ w, int words, int stride, int rounds) {
  unsigned int* p = w + (threadIdx.x % words) * stride;
  for (int r = 0; r < rounds; ++r) atomicAdd(p, 1u);
}

// histogram.cu's kernel; FINAL = 0 leaves out the last loop (each block's 256 bins added to the global histogram)
#define BINS 256
template <int FINAL>
__device__ void histogram_body(const int* __restrict__ in, unsigned int* __restrict__ hist, int n) {
  __shared__ unsigned int h[BINS];
  for (int b = threadIdx.x; b < BINS; b += blockDim.x) h[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) atomicAdd(&h[in[i]], 1u);
  __syncthreads();
  if (FINAL) {
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) atomicAdd(&hist[b], h[b]);
  } else {
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
      if (h[b] == 0xFFFFFFFFu) hist[b] = h[b];  // never true: keeps the shared histogram live
  }
}
extern "C" __global__ void hist_final(const int* in, unsigned int* hist, int n) { histogram_body<1>(in, hist, n); }
extern "C" __global__ void hist_nofinal(const int* in, unsigned int* hist, int n) { histogram_body<0>(in, hist, n); }
