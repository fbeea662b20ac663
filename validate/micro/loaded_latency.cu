// Loaded latency (validate/micro/run_loaded_latency.py): how long one warp's dependent loads take while the rest of
// the chip streams from L2 or HBM. Launched with one CTA per SM (grid = SM count, 1024 threads, 120 KiB of dynamic
// shared memory so that two CTAs cannot share an SM).
//
// CTA 0, warp 0, lane 0 (the chase): spins spin_ns on %globaltimer (the loaders of every CTA start at launch and
// reach full rate meanwhile), walks warm_hops untimed hops, sets ctrl[0] = 1 (timed window open), records clock64 and
// %globaltimer, walks `hops` dependent loads j = chase[j] (ld.global.cg.u32: L1 bypassed; chase holds int offsets
// forming one random cycle over 128-B lines), records both clocks again, sets ctrl[0] = 2 (stop). out[0..4] = clock64
// start, end, globaltimer start, end, final offset. With record != 0 every hop's cycles (clock64 after a dependent
// shared store, a few cycles of overhead) also go to samples[0..hops).
//
// Warps 1..loaders of every CTA (of CTA 0 only if cta0_streams) stream: each lane loads float4 (ld.global.cg,
// coalesced, grid-strided over the loader lanes, wrapping around the buffer) into a register sum, in batches of 32
// loads (4 groups of 8 independent loads). Lane 0 reads ctrl[0] (volatile) at the start of each batch; a batch that
// started with ctrl[0] == 1 counts its 32 x 32 x 16 bytes, and the warp stops after the batch that saw ctrl[0] == 2.
// Guard against a hang: a loader also stops after max_batches batches or guard_ns of %globaltimer, and then adds 1
// to ctrl[1]. At the end lane 0 adds the warp's counted bytes to *bytes; every lane writes its sum to sink.
// Other warps return at once.

#include "stream_common.cuh"

static __device__ __forceinline__ unsigned ld_cg_u32(const unsigned* p) {
  unsigned v;
  asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
extern "C" __global__ void __launch_bounds__(1024, 1)
loaded_latency(const unsigned* __restrict__ chase, unsigned start, int warm_hops, int hops, int record,
               unsigned* samples, const float4* __restrict__ stream, unsigned n_vec, int loaders, int cta0_streams,
               unsigned* ctrl, unsigned long long* bytes, long long max_batches, long long guard_ns,
               long long spin_ns, long long* out, float* sink) {
  extern __shared__ unsigned smem[];  // per-hop samples of the chase, then one slot for the dependent store
  const unsigned warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  volatile unsigned* phase = ctrl;

  if (blockIdx.x == 0 && warp == 0) {  // ------------------------------------------------------------ the chase
    if (lane != 0) return;
    volatile unsigned* dep = smem + hops;
    const long long gs = gtimer();
    while (gtimer() - gs < spin_ns) {
    }
    unsigned j = start;
    for (int i = 0; i < warm_hops; ++i) j = ld_cg_u32(chase + j);
    *dep = j;  // the warm-up is over before the window opens
    *phase = 1;
    __threadfence();
    long long t0, t1, g0, g1;
    if (record) {
      g0 = gtimer();
      t0 = clock64();
      long long tp = t0;
      for (int i = 0; i < hops; ++i) {
        j = ld_cg_u32(chase + j);
        *dep = j;  // waits for the load, so the clock read below does too
        const long long t = clock64();
        smem[i] = (unsigned)(t - tp);
        tp = t;
      }
      t1 = clock64();
      g1 = gtimer();
    } else {
      g0 = gtimer();
      t0 = clock64();
      for (int i = 0; i < hops; ++i) j = ld_cg_u32(chase + j);
      *dep = j;  // the last load has returned before t1
      t1 = clock64();
      g1 = gtimer();
    }
    *phase = 2;
    __threadfence();
    out[0] = t0;
    out[1] = t1;
    out[2] = g0;
    out[3] = g1;
    out[4] = (long long)j;
    if (record)
      for (int i = 0; i < hops; ++i) samples[i] = smem[i];
    return;
  }

  // ------------------------------------------------------------------------------------------------- the loaders
  if (warp == 0 || warp > (unsigned)loaders) return;
  if (blockIdx.x == 0 && !cta0_streams) return;
  const unsigned stride = gridDim.x * (unsigned)loaders * 32u;  // the host keeps stride <= n_vec
  unsigned i = ((blockIdx.x * (unsigned)loaders + (warp - 1)) * 32u + lane) % n_vec;
  float acc = 0.f;
  long long counted = 0;
  const long long gstart = gtimer();
  bool guard = false;
  for (long long b = 0;; ++b) {
    unsigned ph = 0;
    long long now = 0;
    if (lane == 0) {  // read at the batch's start, used after it: the poll is off the loads' path
      ph = *phase;
      now = gtimer();
    }
    stream_batch(stream, i, stride, n_vec, acc);
    ph = __shfl_sync(0xffffffffu, ph, 0);
    unsigned st = ph;
    if (lane == 0 && ph < 2 && (b + 1 >= max_batches || now - gstart > guard_ns)) st = 3;
    st = __shfl_sync(0xffffffffu, st, 0);
    if (ph == 1) ++counted;
    if (st >= 2) {
      guard = (st == 3);
      break;
    }
  }
  if (lane == 0) {
    atomicAdd(bytes, (unsigned long long)counted * BATCH_BYTES);
    if (guard) atomicAdd(ctrl + 1, 1u);
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
