//! The calling thread's place in its block: its rank (x fastest) and the block's size.

#[cfg(target_arch = "nvptx64")]
use core::arch::nvptx::{
    _block_dim_x, _block_dim_y, _block_dim_z, _block_idx_x, _thread_idx_x, _thread_idx_y,
    _thread_idx_z,
};

/// Warp width of every NVIDIA GPU this crate targets.
pub const WARP: u32 = 32;

#[derive(Clone, Copy)]
pub struct Block {
    /// `x + bx * (y + by * z)`.
    pub rank: u32,
    /// `bx * by * bz`.
    pub threads: u32,
    /// The block's index in a 1D grid: one block per case instance.
    pub index: u32,
}

// The host run of the Scan kernel body (tests/hostrun) brings its own.
#[cfg(target_arch = "nvptx64")]
impl Block {
    #[inline(always)]
    pub fn current() -> Self {
        // SAFETY: reading the thread and block special registers has no preconditions.
        unsafe {
            let (bx, by) = (_block_dim_x(), _block_dim_y());
            Block {
                rank: _thread_idx_x() + bx * (_thread_idx_y() + by * _thread_idx_z()),
                threads: bx * by * _block_dim_z(),
                index: _block_idx_x(),
            }
        }
    }
}
