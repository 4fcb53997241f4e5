// Compiled as relocatable code and device-linked (see conftest.DEVICE_LINKED): the callee keeps
// its own section and frame, so the kernel's stack (own frame + callee's) exceeds its local frame.
__device__ __noinline__ int lookup(const int* src, int shift) {
  int table[32];
  for (int i = 0; i < 32; ++i) table[(i * 5 + shift) & 31] = src[i];
  return table[shift & 31];
}

extern "C" __global__ void separate_call(const int* src, int* dst, int shift) {
  int table[64];
  for (int i = 0; i < 64; ++i) table[(i * 7 + shift) & 63] = src[i * blockDim.x + threadIdx.x];
  dst[threadIdx.x] = table[(shift + threadIdx.x) & 63] + lookup(src + threadIdx.x, shift);
}
