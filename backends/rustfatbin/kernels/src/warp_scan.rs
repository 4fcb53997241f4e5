//! Warp Scan: CUB's WarpScan (InclusiveScan, ExclusiveScan, with or without an initial value, with the warp
//! aggregate) over the contract's logical warps ([`crate::warp`]); the rules are `coopcheck.warp_scan`'s.
//!
//! Each lane scans up as CUB's WarpScanShfl::InclusiveScan does: at step `s` lane `l >= s` takes `op(lane l - s's
//! partial, its own)`, so lane `l` holds lanes 0 to `l` in lane order (never a swapped pair). Two more shuffles give
//! each lane its left neighbour's scan (exclusive) and its logical warp's last lane's (the aggregate, without the
//! seed); the seed goes left of every operand. Every exchange is a `shfl.sync` of the hardware warp's existing lanes:
//! no barrier, no scratch.

use crate::block::Block;
use crate::operator::{Operand, Operator, Record};
use crate::shfl::Shfl;
use crate::warp::{LogicalWarp, LEVELS};

/// The host's codes (`coopcheck.warp_scan`'s MODES, SEEDS and AGGREGATES orders).
const INCLUSIVE: i64 = 0;
const INITIAL: i64 = 1;
const AGGREGATE_ON: i64 = 0;

/// (the inclusive scan of the calling lane, its left neighbour's (lane 0: its own), its logical warp's
/// aggregate); every thread of the block calls it together with the same width.
#[inline(always)]
pub unsafe fn warp_scan<T: Operand + Shfl, O: Operator<T>>(warp: LogicalWarp, item: T, record: &mut Record<T>)
    -> (T, T, T) {
    let rank = warp.rank();
    let mut x = item;
    unsafe {
        for level in 0..LEVELS {
            let step = 1 << level;
            let taking = step < warp.width && rank >= step;
            // a lane that takes nothing reads its own partial: no source names a lane the hardware warp lacks
            let peer = x.shfl(if taking { warp.lane - step } else { warp.lane }, warp.mask);
            if taking {
                x = O::apply(peer, x, record);
            }
        }
        let aggregate = x.shfl(warp.last, warp.mask);
        let left = x.shfl(if rank > 0 { warp.lane - 1 } else { warp.lane }, warp.mask);
        (x, left, aggregate)
    }
}

/// The body of `warp_scan_kernels`'s entries (their ABI is there): the thread's item in, the warp scan, its
/// scanned item and (aggregate on) its logical warp's aggregate out.
#[inline(always)]
pub unsafe fn warp_scan_kernel<T: Operand + Shfl, O: Operator<T>>(
    items: *const T, initial: *const T, dst: *mut T, width: i64, mode: i64, seed: i64, aggregate: i64,
) {
    let block = Block::current();
    let warp = LogicalWarp::of(block, width);
    let (b, threads, rank) = (block.index as usize, block.threads as usize, block.rank as usize);
    let seeded = seed == INITIAL;
    let with_aggregate = aggregate == AGGREGATE_ON;
    unsafe {
        let mut record = Record { sentinel: T::ZERO, seen: false }; // no operator of the family records
        let (inclusive, left, total) = warp_scan::<T, O>(warp, items.add(b * threads + rank).read(), &mut record);
        let seed_value = if seeded { initial.add(b).read() } else { T::ZERO };
        let scanned = if mode == INCLUSIVE {
            if seeded { O::apply(seed_value, inclusive, &mut record) } else { inclusive }
        } else if warp.rank() == 0 {
            seed_value // without a seed: undefined but for sum, whose is 0 (CUB's ExclusiveSum)
        } else if seeded {
            O::apply(seed_value, left, &mut record)
        } else {
            left
        };
        let first = b * threads * if with_aggregate { 2 } else { 1 } + rank;
        dst.add(first).write(scanned);
        if with_aggregate {
            dst.add(first + threads).write(total);
        }
    }
}
