// A module-scope `extern __shared__` array gives every kernel of the module a shared section with
// the system's reserved window, even mixed_plain, which never touches shared memory.
extern __shared__ int scratch[];

extern "C" __global__ void mixed_plain(const int* __restrict__ src, int* __restrict__ dst) {
  dst[threadIdx.x] = src[threadIdx.x] + 1;
}

extern "C" __global__ void mixed_dynamic(const int* src, int* dst) {
  scratch[threadIdx.x] = src[threadIdx.x];
  __syncthreads();
  dst[threadIdx.x] = scratch[blockDim.x - 1 - threadIdx.x];
}
