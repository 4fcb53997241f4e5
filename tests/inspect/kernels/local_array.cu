// (d) A 256-byte local array indexed at run time, which registers cannot hold: local memory.
extern "C" __global__ void local_array(const int* src, int* dst, int shift) {
  int table[64];
  for (int i = 0; i < 64; ++i) table[(i * 7 + shift) & 63] = src[i * blockDim.x + threadIdx.x];
  dst[threadIdx.x] = table[(shift + threadIdx.x) & 63];
}
