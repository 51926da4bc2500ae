// sincos.cu: out = sin(x) * cos(x) + sqrt(|x|) in double precision: more arithmetic per byte
// moved than inc.cu, so the GPU's lead over the CPU grows.
__global__ void sincos_sqrt(const double *x, double *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = sin(x[i]) * cos(x[i]) + sqrt(fabs(x[i]));
}
