// Each thread takes a buffer from the device heap, fills it, copies it out and frees it.
__global__ void buffers(int *out, int n)
{
  int t = threadIdx.x;
  int *buf = (int *)malloc(n * sizeof(int));
  for (int j = 0; j < n; j++)
    buf[j] = t * j;
  for (int j = 0; j < n; j++)
    out[t * n + j] = buf[j];
  free(buf);
  if (t % 8 == 0)
    free(buf);
}
