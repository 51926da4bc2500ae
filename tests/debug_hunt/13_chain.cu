// Suffix sums chained over blocks: block b waits until block b + 1 has published its sum.
__global__ void chain(const int *x, int *suffix, volatile int *ready, int nb)
{
  int b = blockIdx.x;
  if (threadIdx.x == 0) {
    int after = 0;
    if (b < nb - 1) {
      while (ready[b + 1] == 0) {
      }
      after = suffix[b + 1];
    }
    suffix[b] = after + x[b];
    __threadfence();
    ready[b] = 1;
  }
}
