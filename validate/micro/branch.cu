// Branches: what a warp pays beyond its issues for a branch it takes, uniformly or divergently (the switch_ops miss:
// ncu's branch_resolving, 2.8 cycles an issue, which the model does not have). One CTA of 1024 threads per SM; the
// first `warps` warps run `iters` trips of a switch on (lane % ways) (ways 1: every lane takes one case, the branch
// is uniform; 32: each lane its own of 8 cases), or (ways 0) on the trip count (uniform, a different case each trip).
// Each case is a chain of dependent integer ops, long enough that ptxas branches instead of predicating.
#define CASE(k, a, b, c)                                  \
  case k:                                                 \
    acc = acc * a + (acc >> b);                           \
    acc ^= acc << c;                                      \
    acc = acc * (a + 2) + (acc >> (b + 1));               \
    acc ^= acc >> (c + 1);                                \
    acc = acc * (a + 4) + k;                              \
    break;

// The eight cases (the default one with its own constants), as one statement.
#define SWITCH8(k)                                                                             \
  switch (k) {                                                                                 \
    CASE(0, 3, 7, 5)                                                                           \
    CASE(1, 5, 9, 3)                                                                           \
    CASE(2, 7, 11, 6)                                                                          \
    CASE(3, 9, 5, 7)                                                                           \
    CASE(4, 11, 13, 2)                                                                         \
    CASE(5, 13, 3, 9)                                                                          \
    CASE(6, 15, 6, 4)                                                                          \
    default:                                                                                   \
      acc = acc * 17 + (acc >> 4);                                                             \
      acc ^= acc << 8;                                                                         \
      acc = acc * 19 + (acc >> 5);                                                             \
      acc ^= acc >> 9;                                                                         \
      acc = acc * 21 + 7;                                                                      \
  }

// The warp's cycles since t0 (lane 0 writes them) and its lanes' values into the CTA's sink (so nothing is dead code).
__device__ __forceinline__ void record(long long* cyc, unsigned* sink, long long t0, int w, int lane, unsigned acc) {
  __syncwarp();
  long long t1 = clock64();
  if (lane == 0) cyc[blockIdx.x * 32 + w] = t1 - t0;
  atomicAdd(sink + blockIdx.x, acc);
}

extern "C" __global__ void br_ways(int ways, int iters, int warps, long long* cyc, unsigned* sink) {
  int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (w >= warps) return;
  unsigned acc = threadIdx.x * 2654435761u;
  int sel = ways > 0 ? lane % ways : 0;
  __syncwarp();
  long long t0 = clock64();
#pragma unroll 1
  for (int i = 0; i < iters; i++) {
    int k = ways > 0 ? sel : (i & 7);
    SWITCH8(k)
  }
  record(cyc, sink, t0, w, lane, acc);
}

// The same chain without the switch: every lane runs case 0's ops each trip (what the issues alone cost).
extern "C" __global__ void br_none(int ways, int iters, int warps, long long* cyc, unsigned* sink) {
  int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (w >= warps) return;
  unsigned acc = threadIdx.x * 2654435761u;
  __syncwarp();
  long long t0 = clock64();
#pragma unroll 1
  for (int i = 0; i < iters; i++) {
    acc = acc * 3 + (acc >> 7);
    acc ^= acc << 5;
    acc = acc * 5 + (acc >> 8);
    acc ^= acc >> 6;
    acc = acc * 7 + ways;
  }
  record(cyc, sink, t0, w, lane, acc);
}

// The switch on a selector that varies per lane and per trip ((lane % ways + trip) & 7): ptxas compiles it as a tree
// of compares and branches (no jump table), and with ways > 1 the warp's lanes take different cases each trip, so its
// branches diverge (ways 1: uniform, a different case each trip, as br_ways with ways 0).
extern "C" __global__ void br_tree(int ways, int iters, int warps, long long* cyc, unsigned* sink) {
  int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (w >= warps) return;
  unsigned acc = threadIdx.x * 2654435761u;
  int sel = lane % (ways > 0 ? ways : 1);
  __syncwarp();
  long long t0 = clock64();
#pragma unroll 1
  for (int i = 0; i < iters; i++) {
    SWITCH8((sel + i) & 7)
  }
  record(cyc, sink, t0, w, lane, acc);
}
