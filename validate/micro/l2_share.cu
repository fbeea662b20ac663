// Do CTAs that read the same data at the same time share one fetch from DRAM? Every CTA of a chip-filling grid
// (1024 threads, two per SM) reads a panel of 32 rows x K floats, one row per warp, front to back: MODE 0 all lanes
// the same word (one sector per request, eight requests per sector, as sgemm_coalesced reads A), MODE 1 a whole
// 128-B line per request. P CTAs read each panel: FAR = 0 CTAs i*P .. i*P+P-1 (launched together), FAR = 1 CTAs
// g, g + n/P, ... (launched n/P apart, as sgemm_coalesced's two readers of an A panel are 128 apart).
extern "C" __global__ void l2_share(const float* __restrict__ buf, int K, int P, int far, int mode, float* sink,
                                    unsigned long long* stamps) {
  const int n = gridDim.x, groups = n / P;
  const int g = far ? blockIdx.x % groups : blockIdx.x / P;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const float* row = buf + ((long long)g * 32 + warp) * K;
  // stamps (where given): %globaltimer when warp 0 starts each quarter of its row and when it ends, and %smid
  const bool stamp = stamps && threadIdx.x == 0;
  unsigned long long* st = stamps + (long long)blockIdx.x * 6;
  float acc = 0.f;
  const int step = mode == 0 ? 1 : 32;
  for (int k = mode == 0 ? 0 : lane; k < K; k += step) {
    if (stamp && (k & (K / 4 - 1)) == 0) {
      unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); st[k / (K / 4)] = t; }
    float v; asm volatile("ld.global.f32 %0, [%1];" : "=f"(v) : "l"(row + k)); acc += v;
  }
  if (stamp) { unsigned long long t; unsigned s; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s)); st[4] = t; st[5] = s; }
  if (acc == 1234.5f) sink[threadIdx.x] = acc;
}
