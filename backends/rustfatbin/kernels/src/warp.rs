//! The contract's logical warps (`coopcheck.warp_reduce`): each hardware warp (32 consecutive ranks, the block's
//! last one partial when 32 does not divide it) cut into runs of `width` lanes from its lane 0, so that no logical
//! warp straddles two hardware warps, whatever the width (NVIDIA/cccl#858: CUB's WarpMask gives a non-power-of-two
//! logical warp past a hardware warp's first a mask without its own lanes).
//!
//! Lanes are counted within the hardware warp, as `shfl.sync` counts them. Every lane exchanges with the mask of
//! the lanes its hardware warp has, so a shuffle never names a lane that does not exist.

use crate::block::{Block, WARP};
use crate::shfl::converged_lanes;

/// Steps of a doubling exchange over a logical warp: 1, 2, 4, 8, 16.
pub const LEVELS: u32 = WARP.trailing_zeros();

/// The calling thread's place in its logical warp, in lanes of its hardware warp.
#[derive(Clone, Copy)]
pub struct LogicalWarp {
    /// The thread's lane in its hardware warp (`rank % 32`).
    pub lane: u32,
    /// The hardware lane of its logical warp's lane 0.
    pub first: u32,
    /// The hardware lane of its logical warp's last lane (a partial logical warp's last present one).
    pub last: u32,
    /// The lanes its hardware warp has: the member mask of every exchange.
    pub mask: u32,
    /// Lanes of a whole logical warp.
    pub width: u32,
}

impl LogicalWarp {
    /// The calling thread's logical warp at `width` lanes (1 to 32; the host checked it: others are clamped to it,
    /// so that no division by zero can trap). Every thread of the block calls it before any branch.
    #[inline(always)]
    pub fn of(block: Block, width: i64) -> Self {
        let width = width.max(1).min(WARP as i64) as u32;
        let lane = block.rank % WARP;
        // lane - lane % width without a division (ptxas makes a run-time one a CALL): the multiples of width up to it
        let first = (1..WARP).filter(|k| k * width <= lane).count() as u32 * width;
        let existing = (block.threads - (block.rank - lane)).min(WARP);
        // SAFETY: every lane of the hardware warp is here: the lanes it has
        let mask = unsafe { converged_lanes() };
        LogicalWarp { lane, first, last: (first + width).min(existing) - 1, mask, width }
    }

    /// The thread's lane in its logical warp.
    #[inline(always)]
    pub fn rank(self) -> u32 {
        self.lane - self.first
    }

}
