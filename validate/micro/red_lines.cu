// Global reductions (atomicAdd whose result is unused: REDG.E.ADD) onto a few lines, each warp's 32 lanes on one line
// or each lane on its own: how the L2 serializes reductions by line, by word and by slice. run_red_lines.py.
// Warp g (of the whole grid) reduces onto line g % lines; lane l onto word l % wpl of that line (32 / wpl lanes share
// a word). spread = 1: lane l of warp g onto line (32 g + l) % lines instead, one word (its first) each. Lines lie
// gap_words words apart. Every thread adds 1, `rounds` times (rounds = 0: the launch alone).
extern "C" __global__ void red_lines(unsigned int* __restrict__ w, int lines, long long gap_words, int wpl,
                                     int spread, int rounds) {
  const long long g = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  unsigned int* p = spread ? w + ((32 * g + lane) % lines) * gap_words : w + (g % lines) * gap_words + lane % wpl;
  for (int r = 0; r < rounds; ++r) atomicAdd(p, 1u);
}
