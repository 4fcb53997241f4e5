//! Block Reduce: CUB's raking, raking_commutative_only and warp_reductions (the rules are
//! `coopcheck.reduce`'s; cub/block/specializations/block_reduce_*.cuh).
//!
//! A thread first reduces its valid items in order into its partial; the block then reduces the partials
//! of the `num_valid` threads that hold a valid item through scratch of one item a thread, every step
//! guarded so that no operator ever sees an invalid item (NVIDIA/cub#74). Every step is separated by a block
//! barrier, those within a warp too: ptxas for sm_80 makes a warp barrier whose lane mask is a run-time value
//! (a partial last warp names only its existing lanes) a CALL, which the contract forbids. A last barrier lets
//! the caller reuse the scratch as soon as the call returns. Thread 0 returns the result.

use core::mem::size_of;

use crate::block::{Block, WARP};
use crate::operator::{Operand, Operator, Record};
use crate::shared::{scratch, sync_block};

/// Levels of a tree (or a doubling scan) over one warp's lanes: steps 1, 2, 4, 8, 16.
pub(crate) const TREE_LEVELS: u32 = WARP.trailing_zeros();

/// How the block reduces the threads' partials.
pub trait Algorithm {
    /// The operator over the partials of threads `0..num_valid`, in thread 0; every thread calls it.
    unsafe fn reduce<T: Operand, O: Operator<T>>(block: Block, partial: T, num_valid: u32, record: &mut Record<T>)
        -> T;
}

/// The raking threads (at most a warp) each reduce one segment of the partials in order, then warp 0 reduces
/// the raking partials.
pub struct Raking;
/// With a full tile of whole warps (more than one), warp 0 folds the other threads' partials into its own, in
/// an order other than the tile's; otherwise as [`Raking`].
pub struct RakingCommutativeOnly;
/// Each warp reduces its lanes' partials, then thread 0 folds in the aggregates of the warps with valid items.
pub struct WarpReductions;

/// Shared-window address of scratch element `index`.
#[inline(always)]
pub(crate) fn slot<T>(base: u32, index: u32) -> u32 {
    base + index * size_of::<T>() as u32
}

/// Partials per raking segment: raking thread t (t < 32, t * segment < threads) takes partials
/// t * segment .. (t + 1) * segment, so at most a warp of threads rakes.
#[inline(always)]
pub(crate) fn raking_segment(threads: u32) -> u32 {
    if threads > WARP { threads.div_ceil(WARP) } else { 1 }
}

/// An in-order tree over the lanes `l` (at most a warp's) with `l * scale < limit`, through scratch slots
/// `base + l`: lane `l` takes lane `l + s`'s value for s = 1, 2, 4, ...; lane 0 ends with the aggregate. Every
/// thread of the block calls it (a scale spares the raking threads a run-time division).
#[inline(always)]
unsafe fn tree<T: Operand, O: Operator<T>>(base: u32, lane: u32, scale: u32, limit: u32, mut x: T,
                                           record: &mut Record<T>) -> T {
    unsafe {
        if lane * scale < limit {
            x.store_shared(slot::<T>(base, lane));
        }
        sync_block();
        for level in 0..TREE_LEVELS {
            let step = 1 << level;
            if lane % (2 * step) == 0 && (lane + step) * scale < limit {
                x = O::apply(x, T::load_shared(slot::<T>(base, lane + step)), record);
                x.store_shared(slot::<T>(base, lane));
            }
            sync_block();
        }
    }
    x
}

impl Algorithm for Raking {
    #[inline(always)]
    unsafe fn reduce<T: Operand, O: Operator<T>>(block: Block, partial: T, num_valid: u32, record: &mut Record<T>)
        -> T {
        let base = scratch();
        let segment = raking_segment(block.threads);
        let mut x = partial;
        unsafe {
            if block.rank < num_valid {
                partial.store_shared(slot::<T>(base, block.rank));
            }
            sync_block();
            // Only raking threads (all in warp 0: 32 * segment >= threads) have rank * segment < num_valid.
            let first = block.rank * segment;
            if first < num_valid {
                x = T::load_shared(slot::<T>(base, first));
                for i in 1..segment {
                    if first + i < num_valid {
                        x = O::apply(x, T::load_shared(slot::<T>(base, first + i)), record);
                    }
                }
            }
            // The tree reuses the grid's first slots: every raking read is done first (NVIDIA/cccl#1902).
            sync_block();
            tree::<T, O>(base, block.rank, segment, num_valid, x, record)
        }
    }
}

impl Algorithm for RakingCommutativeOnly {
    #[inline(always)]
    unsafe fn reduce<T: Operand, O: Operator<T>>(block: Block, partial: T, num_valid: u32, record: &mut Record<T>)
        -> T {
        let threads = block.threads;
        if threads <= WARP || threads % WARP != 0 || num_valid < threads {
            return unsafe { Raking::reduce::<T, O>(block, partial, num_valid, record) };
        }
        // The partials of threads past the first warp go to slots 0 .. sharing; warp 0's tree runs in the
        // slots after them, so no raking read waits for it.
        let base = scratch();
        let sharing = threads - WARP;
        let segment = sharing / WARP;
        let mut x = partial;
        unsafe {
            if block.rank >= WARP {
                partial.store_shared(slot::<T>(base, block.rank - WARP));
            }
            sync_block();
            if block.rank < WARP {
                for i in 0..segment {
                    x = O::apply(x, T::load_shared(slot::<T>(base, block.rank * segment + i)), record);
                }
            }
            tree::<T, O>(slot::<T>(base, sharing), block.rank, 1, WARP, x, record)
        }
    }
}

impl Algorithm for WarpReductions {
    #[inline(always)]
    unsafe fn reduce<T: Operand, O: Operator<T>>(block: Block, partial: T, num_valid: u32, record: &mut Record<T>)
        -> T {
        let base = scratch();
        let (warp, lane) = (block.rank / WARP, block.rank % WARP);
        let count = num_valid.saturating_sub(warp * WARP).min(WARP);
        unsafe {
            // every warp's tree ends in a block barrier: every warp's aggregate is in its first slot
            let mut x = tree::<T, O>(slot::<T>(base, warp * WARP), lane, 1, count, partial, record);
            if block.rank == 0 {
                for w in 1..block.threads.div_ceil(WARP) {
                    if w * WARP < num_valid {
                        x = O::apply(x, T::load_shared(slot::<T>(base, w * WARP)), record);
                    }
                }
            }
            x
        }
    }
}

/// The operator `O` over the block's first `valid` items (the calling thread's `item(i)` is tile index
/// `rank * IPT + i`), defined in thread 0 for `valid >= 1`; every thread calls it together. The scratch is
/// `threads` items. Each item is read where it is reduced: no array of items exists for a loop that LLVM does
/// not unroll (a wide operator at 16 items) to put in local memory.
#[inline(always)]
pub unsafe fn block_reduce<T: Operand, O: Operator<T>, A: Algorithm, const IPT: usize>(
    block: Block, item: impl Fn(usize) -> T, valid: u32, record: &mut Record<T>,
) -> T {
    let mut partial = item(0);
    for i in 1..IPT {
        if block.rank * IPT as u32 + (i as u32) < valid {
            partial = O::apply(partial, item(i), record);
        }
    }
    let num_valid = valid.div_ceil(IPT as u32).min(block.threads);
    unsafe {
        let result = A::reduce::<T, O>(block, partial, num_valid, record);
        sync_block(); // the caller may reuse the scratch as soon as this returns
        result
    }
}
