// Does a shared-memory load whose lanes are all predicated off hold up an instruction that reads its result?
// (validate/micro/run_predld.py) One warp runs a dependent chain of 64 links: a load from shared memory under a
// predicate (`@p ld.shared.f32`, p the same for every lane, from the kernel's argument), a float add of its
// destination, and the next address derived from that sum (AND with a zero mask the compiler cannot see).
// clock64 around the chain: cycles per link with the predicate on and off; a second variant has a second warp
// of the same SM sub-partition keep the MIO queue busy with 32-way conflicted loads meanwhile.
extern "C" __global__ void pld_chain(int on, unsigned int zero, int busy, float* sink, long long* out) {
  __shared__ float s[32 * 33];
  for (int i = threadIdx.x; i < 32 * 33; i += blockDim.x) s[i] = 1.0f;
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp == 0) {
    unsigned int addr = (unsigned int)__cvta_generic_to_shared(&s[lane]);
    float acc = 0.0f, v = 0.0f;
    long long t0 = clock64();
#pragma unroll 1
    for (int i = 0; i < 64; ++i) {
      asm volatile("{ .reg .pred p; setp.ne.s32 p, %2, 0; @p ld.shared.f32 %0, [%1]; }"
                   : "+f"(v) : "r"(addr), "r"(on));
      asm volatile("add.f32 %0, %0, %1;" : "+f"(acc) : "f"(v));
      addr += __float_as_uint(acc) & zero;
    }
    long long t1 = clock64();
    if (lane == 0) out[0] = t1 - t0;
    if (acc == 1234.5f) sink[0] = acc;
  } else if (busy && warp == 4) {  // the same sub-partition as warp 0 (warp % 4)
    unsigned int a = (unsigned int)__cvta_generic_to_shared(&s[lane * 32]);
    float x = 0.0f;
    for (int i = 0; i < 512; ++i) {
      float y;
      asm volatile("ld.shared.f32 %0, [%1];" : "=f"(y) : "r"(a));
      x += y;
    }
    if (x == 1234.5f) sink[1] = x;
  }
}
