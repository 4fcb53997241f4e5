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

/// `flag`, which LLVM cannot see through: a thread-dependent condition tested again after block barriers goes
/// through this where it is tested the second time. Otherwise jump threading may copy everything between the two
/// tests, barriers included, into both arms of the first (it did for the raking Scan: its 11-barrier warp scan,
/// once for the raking threads and once for the others), and the threads of a warp that take different arms then
/// wait at different `bar.sync` instructions, which PTX leaves undefined (a warp of 22 raking threads and 10 others
/// hung every 65-thread raking Scan on an H200). Not `pure`: two of them are never merged into one.
#[inline(always)]
pub fn unthreaded(flag: bool) -> bool {
    let out: u32;
    // SAFETY: a register move; it reads and writes no memory.
    unsafe {
        asm!("mov.u32 {o}, {i};", o = out(reg32) out, i = in(reg32) u32::from(flag),
             options(nomem, nostack, preserves_flags));
    }
    out != 0
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
