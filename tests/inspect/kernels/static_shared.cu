// (b) 1024 bytes of static shared memory exchanged across one __syncthreads barrier.
extern "C" __global__ void static_shared(const int* src, int* dst) {
  __shared__ int scratch[256];
  scratch[threadIdx.x] = src[threadIdx.x];
  __syncthreads();
  dst[threadIdx.x] = scratch[255 - threadIdx.x];
}
