//! Warp Reduce: CUB's WarpReduce (Reduce with valid_items, HeadSegmentedReduce, TailSegmentedReduce) over the
//! contract's logical warps ([`crate::warp`]); the rules are `coopcheck.warp_reduce`'s.
//!
//! Each lane finds its segment's last lane (valid_items clamped to the lanes its logical warp has, or the next head
//! or tail flag through a ballot), then reduces down as CUB's WarpReduceShfl does: at step `s` lane `l` takes lane
//! `l + s`'s partial when that lane is within its segment, so the first lane of a segment holds the segment's fold
//! in lane order (`op(own, higher)`) and no operator meets a lane past the segment's end. Every exchange is a
//! `shfl.sync` of the hardware warp's existing lanes: no barrier, no scratch.

use crate::block::Block;
use crate::operator::{Operand, Operator, Record};
use crate::shfl::{ballot, Shfl};
use crate::warp::{LogicalWarp, LEVELS};

/// The host's codes of the modes (`coopcheck.warp_reduce.MODES`' order).
pub const REDUCE: i64 = 0;
pub const HEAD: i64 = 1;

/// The hardware lane of the last lane of the calling lane's segment (below its own lane where it is in none:
/// mode reduce with no valid lane). Without a branch: every lane of the hardware warp votes, whatever the mode.
#[inline(always)]
unsafe fn segment_end(warp: LogicalWarp, mode: i64, flag: bool, valid: i32) -> i32 {
    let flagged = unsafe { ballot(warp.mask, flag) };
    // head: a segment ends before the next flagged lane past this one; tail: at the first flagged lane from it on
    let head = mode == HEAD;
    let from = warp.lane + head as u32;
    let later = if from < 32 { flagged >> from << from } else { 0 };
    let flagged_end = (later.trailing_zeros() as i32 - head as i32).min(warp.last as i32);
    let valid_end = warp.first as i32 + valid.max(0).min((warp.last - warp.first + 1) as i32) - 1;
    if mode == REDUCE { valid_end } else { flagged_end }
}

/// The operator over the calling lane's segment from its lane on, defined in each segment's first lane; every
/// thread of the block calls it together with the same `width` and `mode`.
#[inline(always)]
pub unsafe fn warp_reduce<T: Operand + Shfl, O: Operator<T>>(
    warp: LogicalWarp, item: T, flag: bool, valid: i32, mode: i64, record: &mut Record<T>,
) -> T {
    let end = unsafe { segment_end(warp, mode, flag, valid) };
    let mut x = item;
    for level in 0..LEVELS {
        let step = 1 << level;
        let source = warp.lane + step;
        // a step past the width, or a peer past the segment, changes nothing
        let within = step < warp.width && source as i32 <= end;
        // a lane past the segment reads its own partial: no source names a lane the hardware warp lacks
        let peer = unsafe { x.shfl(if within { source } else { warp.lane }, warp.mask) };
        if within {
            x = O::apply(x, peer, record);
        }
    }
    x
}

/// The body of `warp_reduce_kernels`'s entries (their ABI is there): the thread's item and flag in, the warp
/// reduction, its result and seen flag out.
#[inline(always)]
pub unsafe fn warp_reduce_kernel<T: Operand + Shfl, O: Operator<T>>(
    items: *const T, flags: *const u8, valid: *const i32, sentinel: *const T, dst: *mut T, width: i64, mode: i64,
) {
    let block = Block::current();
    let warp = LogicalWarp::of(block, width);
    let (b, threads, rank) = (block.index as usize, block.threads as usize, block.rank as usize);
    unsafe {
        let at = b * threads + rank;
        let mut record = Record { sentinel: sentinel.add(b).read(), seen: false };
        let result = warp_reduce::<T, O>(warp, items.add(at).read(), flags.add(at).read() != 0,
                                         valid.add(b).read(), mode, &mut record);
        let first = b * 2 * threads + rank;
        dst.add(first).write(result);
        dst.add(first + threads).write(if record.seen { T::ONE } else { T::ZERO });
    }
}
