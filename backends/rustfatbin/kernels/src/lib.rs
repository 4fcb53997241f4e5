//! coop-kernels: the block Load/Store primitives of the coop vocabulary as `no_std` nvptx kernels.
//!
//! One `extern "ptx-kernel"` entry per (operation, dtype, items_per_thread, algorithm), named
//! `coop_block_{load,store}__<dtype>__ipt<N>__<algorithm>` and following the batched ABI of
//! `coopcheck.adapter` (see [`kernels`]). The block shape is read from `blockDim` at run time, so one
//! entry serves 1D, 2D and 3D blocks. The crate is built once per compute capability with
//! `--cfg cuda_arch="YY"` for every capability YY up to the target: `cfg(cuda_arch = "90")` means
//! "sm_90 or newer".
#![no_std]
#![feature(abi_ptx, stdarch_nvptx, asm_experimental_arch, link_llvm_intrinsics)]
// `link_llvm_intrinsics` reaches `llvm.nvvm.bar.warp.sync`, which core::arch does not wrap.
#![allow(internal_features)]

mod algorithm;
mod block;
mod item;
pub mod kernels;
pub mod probe;
mod shared;

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    // SAFETY: trap ends the kernel; nothing runs after it.
    unsafe { core::arch::nvptx::trap() }
}
