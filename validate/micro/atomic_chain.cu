// One thread's chain of dependent global atomics (each address from the old value the one before returned) against
// its chain of dependent L2 loads (ld.global.cg): what an atomic's round trip to the L2 takes. run_atomic_chain.py.
extern "C" __global__ void atom_chain(unsigned int* c, unsigned long long* cycles, int n) {
  unsigned int v = 0;
  long long t0 = clock64();
  for (int k = 0; k < n; ++k) v = atomicAdd(&c[(v & 63) * 32], 1u);  // the next address from the old value
  long long t1 = clock64();
  cycles[0] = (unsigned long long)(t1 - t0);
  c[4096] = v;
}
extern "C" __global__ void load_chain(const unsigned int* p, unsigned long long* cycles, int n) {
  unsigned int v = 0;
  long long t0 = clock64();
  for (int k = 0; k < n; ++k) v = __ldcg(&p[v]);  // p[i] = next index: a permutation within an L2-resident buffer
  long long t1 = clock64();
  cycles[0] = (unsigned long long)(t1 - t0);
  cycles[1] = v;
}
