// split.cu: even threads double their element, odd ones add 100; the README's debugger example.
__global__ void split(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int v = a[i];
    if (threadIdx.x % 2 == 0) {
      v = v * 2;
    } else {
      v = v + 100;
    }
    a[i] = v;
  }
}
