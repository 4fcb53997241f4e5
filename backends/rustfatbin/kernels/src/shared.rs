//! The block's dynamic shared scratch and its barriers. The scratch is one `.extern .shared`
//! array declared in PTX (plain rustc cannot declare `.shared` statics); its size is chosen at
//! launch, so the host passes the dynamic shared bytes the algorithm needs.

use core::arch::{asm, global_asm};

global_asm!(".extern .shared .align 16 .b8 coop_dynamic_smem[];");

/// Shared-window byte address of the block's dynamic scratch.
#[inline(always)]
pub fn scratch() -> u32 {
    let base: u32;
    // SAFETY: taking the address of the declared array reads and writes nothing.
    unsafe {
        asm!("mov.u32 {r}, coop_dynamic_smem;", r = out(reg32) base,
             options(pure, nomem, nostack, preserves_flags));
    }
    base
}

/// Barrier of the whole block; orders shared accesses before it with those after it.
#[inline(always)]
pub unsafe fn sync_block() {
    unsafe { core::arch::nvptx::_syncthreads() }
}

unsafe extern "C" {
    // The LLVM intrinsic rather than inline PTX: it is `convergent`, so LLVM never copies it into
    // divergent branches (ptxas would then need a CALL to a warp-sync subroutine).
    #[link_name = "llvm.nvvm.bar.warp.sync"]
    fn bar_warp_sync(mask: u32);
}

/// Barrier of the calling warp (all 32 lanes).
#[inline(always)]
pub unsafe fn sync_warp() {
    unsafe { sync_lanes(u32::MAX) }
}

/// Barrier of the lanes of the calling warp that `mask` names (a warp of a block of fewer than 32
/// threads has fewer lanes: the mask must name only lanes that exist).
#[inline(always)]
pub unsafe fn sync_lanes(mask: u32) {
    unsafe { bar_warp_sync(mask) }
}
