// (c) Dynamic shared memory only: its size is a launch parameter, invisible in the cubin.
extern "C" __global__ void dynamic_shared(const int* src, int* dst) {
  extern __shared__ int scratch[];
  scratch[threadIdx.x] = src[threadIdx.x];
  __syncthreads();
  dst[threadIdx.x] = scratch[blockDim.x - 1 - threadIdx.x];
}
