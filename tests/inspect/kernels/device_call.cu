// (e) A device function kept out of line: the kernel's SASS holds a CALL, yet no stack or local.
__device__ __noinline__ int square_plus_seven(int x) { return x * x + 7; }

extern "C" __global__ void device_call(const int* src, int* dst) {
  dst[threadIdx.x] = square_plus_seven(src[threadIdx.x]);
}
