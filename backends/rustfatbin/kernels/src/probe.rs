//! Probes of the per-capability build: which `cuda_arch` cfgs a pass was given.

/// Highest capability among the `cuda_arch` cfgs of this pass (70 for sm_70, 90 for sm_90...).
macro_rules! highest_cuda_arch {
    ($($arch:literal $name:tt),*) => {{
        let mut highest = 0;
        $( if cfg!(cuda_arch = $name) && $arch > highest { highest = $arch; } )*
        highest
    }};
}

pub const CUDA_ARCH: u32 = highest_cuda_arch!(
    70 "70", 72 "72", 75 "75", 80 "80", 86 "86", 87 "87", 88 "88", 89 "89", 90 "90",
    100 "100", 101 "101", 103 "103", 110 "110", 120 "120", 121 "121"
);

/// Adds [`CUDA_ARCH`] of the pass whose code the driver picked to `out[0]`. An add rather than a
/// store keeps the constant an immediate operand in the SASS, where a host test can read it.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn coop_probe_cuda_arch(out: *mut u32) {
    unsafe { out.write(out.read() + CUDA_ARCH) }
}

/// Writes the number of blocks in the calling block's cluster to `out[0]` (1 without clusters).
/// Clusters exist from sm_90 on: `%cluster_nctarank` is refused by ptxas for older targets, so
/// this entry compiles only because `cfg(cuda_arch = "90")` leaves it out of earlier passes.
#[cfg(cuda_arch = "90")]
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn coop_probe_cluster_blocks(out: *mut u32) {
    let blocks: u32;
    unsafe {
        core::arch::asm!("mov.u32 {r}, %cluster_nctarank;", r = out(reg32) blocks, options(pure, nomem, nostack));
        out.write(blocks);
    }
}
