// An integer hash per element (murmur3's finalizer, iterated): integer multiply, shift and xor.
extern "C" __global__ void int_hash(const unsigned* x, unsigned* y, int n, int rounds) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned h = x[i];
    for (int r = 0; r < rounds; r++) {
      h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16; h += r;
    }
    y[i] = h;
  }
}
