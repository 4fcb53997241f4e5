//! coop-kernels: the block Load/Store, Exchange, Shuffle, Reduce and Scan primitives of the coop vocabulary as
//! `no_std` nvptx kernels, and its Warp Reduce and Warp Scan primitives over logical warps.
//!
//! One `extern "ptx-kernel"` entry per specialization, named as `coopcheck.kernel_symbol` names it
//! (`coop_block_load__<dtype>__ipt<N>__<algorithm>`, then the family's variant values) and following the family's
//! batched ABI (see [`kernels`], [`exchange_kernels`], [`shuffle_kernels`], [`reduce_kernels`], [`scan_kernels`],
//! [`warp_reduce_kernels`], [`warp_scan_kernels`]). The block shape is read from `blockDim` at run time, so one
//! entry serves 1D, 2D and 3D blocks. The crate is built once per compute capability with `--cfg cuda_arch="YY"`
//! for every capability YY up to the target: `cfg(cuda_arch = "90")` means "sm_90 or newer".
#![no_std]
#![feature(abi_ptx, stdarch_nvptx, asm_experimental_arch, link_llvm_intrinsics)]
// `link_llvm_intrinsics` reaches `llvm.nvvm.bar.warp.sync` and the warp shuffles and votes, which core::arch does not
// wrap.
#![allow(internal_features)]

mod algorithm;
mod block;
mod exchange;
pub mod exchange_kernels;
mod item;
pub mod kernels;
mod operator;
pub mod probe;
mod reduce;
pub mod reduce_kernels;
mod scan;
pub mod scan_kernels;
mod shared;
mod shfl;
mod shuffle;
pub mod shuffle_kernels;
mod warp;
mod warp_reduce;
pub mod warp_reduce_kernels;
mod warp_scan;
pub mod warp_scan_kernels;

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    // SAFETY: trap ends the kernel; nothing runs after it.
    unsafe { core::arch::nvptx::trap() }
}
