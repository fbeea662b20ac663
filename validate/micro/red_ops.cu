// Global atomics of several kinds onto a few lines from a whole grid: what one request costs the L2 by operation
// (integer or float add, the value unused: RED, or read: ATOMG), by the words it carries, and how requests to
// adjacent lines share the L2's throughput. run_red_ops.py.
// mode 0: warp g (of the whole grid) works on line g % lines, lane l on word l % wpl of it (32 / wpl lanes share a
// word). mode 1: every warp instruction covers all the lines: lane l on line l % lines, word (l / lines) % wpl.
// Only lanes below `active` take part. Lines lie gap_words words apart. `rounds` atomics a thread (0: launch alone).
template <typename T, bool RET>
__device__ void body(T* __restrict__ w, T* __restrict__ sink, int lines, long long gap_words, int wpl, int active,
                     int mode, int rounds) {
  const long long g = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (lane >= active) return;
  T* p = mode ? w + (lane % lines) * gap_words + (lane / lines) % wpl : w + (g % lines) * gap_words + lane % wpl;
  T acc = 0;
  for (int r = 0; r < rounds; ++r) {
    if (RET) acc += atomicAdd(p, (T)1);
    else atomicAdd(p, (T)1);
    asm volatile("" ::: "memory");  // one atomic an iteration: nvcc may not merge them
  }
  if (RET && acc == (T)-12345) sink[0] = acc;  // keeps the returned values live (never true)
}
#define K(NAME, T, RET)                                                                                              \
  extern "C" __global__ void NAME(T* w, T* sink, int lines, long long gap_words, int wpl, int active, int mode,  \
                                  int rounds) {                                                                      \
    body<T, RET>(w, sink, lines, gap_words, wpl, active, mode, rounds);                                              \
  }
K(red_u32, unsigned int, false)
K(red_f32, float, false)
K(atom_u32, unsigned int, true)
K(atom_f32, float, true)
