//! Block Scan: CUB's raking, raking_memoize and warp_scans (the rules are `coopcheck.scan`'s;
//! cub/block/specializations/block_scan_*.cuh), inclusive or exclusive, with no seed, an initial value or a
//! block prefix callback.
//!
//! A thread first folds its items in order into its partial; the block then scans the partials in rank order
//! through scratch of one item a thread, a warp's worth of lanes and one broadcast slot, every step separated by a
//! block barrier, those within a warp too (as in [`crate::reduce`]: ptxas for sm_80 makes a warp barrier with a
//! run-time lane mask a CALL). The seed goes first, left of every operand. A last barrier lets the caller reuse the
//! scratch as soon as the call returns.

use crate::block::{Block, WARP};
use crate::operator::{Operand, Operator, Record};
use crate::reduce::{raking_segment, slot, TREE_LEVELS};
use crate::shared::{scratch, sync_block, unthreaded};

/// Tiles a block scans with the prefix callback carried across them (`coopcheck.scan.PREFIX_TILES`).
pub const PREFIX_TILES: usize = 3;
/// The host's code of mode `inclusive` (`exclusive` is 1).
const INCLUSIVE: i64 = 0;

/// What logically prefixes each tile (`coopcheck.scan`'s seeds; the host passes their codes).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Seed {
    None,
    Initial,
    Prefix,
}

impl Seed {
    /// The seed of host code `code`: 0 none, 1 initial, 2 prefix.
    #[inline(always)]
    pub fn of(code: i64) -> Self {
        match code {
            1 => Seed::Initial,
            2 => Seed::Prefix,
            _ => Seed::None,
        }
    }
}

/// A thread's seed: the initial value or the callback's running prefix, and the callback's last argument and
/// calls (in the dtype: the ABI writes them to `dst`).
pub struct SeedState<T> {
    pub value: T,
    pub argument: T,
    pub calls: T,
}

/// How the block scans the threads' partials.
pub trait Algorithm {
    /// (the operator over the partials of the threads before the calling one, the block aggregate); thread 0's
    /// prefix is undefined. Every thread calls it; the scratch's first `threads + WARP` slots are its own.
    unsafe fn prefixes<T: Operand, O: Operator<T>>(block: Block, partial: T, record: &mut Record<T>) -> (T, T);
    /// Whether the calling thread calls the block prefix callback (CUB: the raking threads, or the first warp).
    fn calls_back(block: Block) -> bool;
}

/// At most a warp of raking threads each fold a segment of the partials in order, a doubling scan over their
/// totals gives each segment its prefix, and each raking thread writes its partials' prefixes back.
pub struct Raking;
/// [`Raking`]: CUB keeps a raking thread's segment in registers between the two passes, which takes a
/// compile-time block shape; with the block shape read at run time the segment would be local memory, which the
/// contract forbids, so the segment is read from the scratch again.
pub type RakingMemoize = Raking;
/// Each warp scans its lanes' partials; a thread's prefix is the aggregates of the warps before its own, in
/// order, then its own warp's earlier lanes.
pub struct WarpScans;

/// The raking threads of a block: those `t < 32` with `t * segment < threads` (counted without a run-time
/// division).
#[inline(always)]
fn raking_threads(threads: u32) -> u32 {
    let segment = raking_segment(threads);
    (0..WARP).filter(|t| t * segment < threads).count() as u32
}

/// An inclusive scan over the lanes `l < count` of the scratch slots from `base` (lane `l` takes lane `l - s`'s
/// value for s = 1, 2, 4, ..., in order); the lanes with `active` take part, every thread calls it. It leaves
/// each lane's result in its slot.
#[inline(always)]
unsafe fn doubling<T: Operand, O: Operator<T>>(base: u32, lane: u32, count: u32, mut x: T, active: bool,
                                               record: &mut Record<T>) -> T {
    let taking = active && lane < count;
    unsafe {
        if taking {
            x.store_shared(slot::<T>(base, lane));
        }
        sync_block();
        for level in 0..TREE_LEVELS {
            let step = 1 << level;
            let reading = taking && lane >= step;
            let mut earlier = x;
            if reading {
                earlier = T::load_shared(slot::<T>(base, lane - step));
            }
            sync_block();
            if reading {
                x = O::apply(earlier, x, record);
                x.store_shared(slot::<T>(base, lane));
            }
            sync_block();
        }
    }
    x
}

impl Algorithm for Raking {
    #[inline(always)]
    unsafe fn prefixes<T: Operand, O: Operator<T>>(block: Block, partial: T, record: &mut Record<T>) -> (T, T) {
        let (base, me, threads) = (scratch(), block.rank, block.threads);
        let segment = raking_segment(threads);
        let rakers = raking_threads(threads);
        let raker = me < rakers;
        let first = me * segment;
        let lanes = slot::<T>(base, threads);
        unsafe {
            partial.store_shared(slot::<T>(base, me));
            sync_block();
            let mut total = partial;
            if raker {
                total = T::load_shared(slot::<T>(base, first));
                for i in 1..segment {
                    if first + i < threads {
                        total = O::apply(total, T::load_shared(slot::<T>(base, first + i)), record);
                    }
                }
            }
            doubling::<T, O>(lanes, me, rakers, total, raker, record); // each segment's total scanned, in place
            let aggregate = T::load_shared(slot::<T>(lanes, rakers - 1));
            if unthreaded(raker) {
                // the segment's partials become their threads' exclusive prefixes (thread 0's stays its own)
                let mut running = if me > 0 { T::load_shared(slot::<T>(lanes, me - 1)) } else { total };
                for i in 0..segment {
                    if first + i < threads {
                        let value = T::load_shared(slot::<T>(base, first + i));
                        if me > 0 || i > 0 {
                            running.store_shared(slot::<T>(base, first + i));
                        }
                        running = if me == 0 && i == 0 { value } else { O::apply(running, value, record) };
                    }
                }
            }
            sync_block();
            (T::load_shared(slot::<T>(base, me)), aggregate)
        }
    }
    #[inline(always)]
    fn calls_back(block: Block) -> bool {
        unthreaded(block.rank < raking_threads(block.threads))
    }
}

impl Algorithm for WarpScans {
    #[inline(always)]
    unsafe fn prefixes<T: Operand, O: Operator<T>>(block: Block, partial: T, record: &mut Record<T>) -> (T, T) {
        let (base, me, threads) = (scratch(), block.rank, block.threads);
        let (warp, lane) = (me / WARP, me % WARP);
        let count = (threads - warp * WARP).min(WARP);
        let warps = slot::<T>(base, threads);
        unsafe {
            // every warp's scan ends in a block barrier: each lane's inclusive value is in its slot
            let inclusive = doubling::<T, O>(slot::<T>(base, warp * WARP), lane, count, partial, true, record);
            if lane == count - 1 {
                inclusive.store_shared(slot::<T>(warps, warp));
            }
            sync_block();
            let mut prefix = if lane > 0 { T::load_shared(slot::<T>(base, me - 1)) } else { partial };
            let mut aggregate = T::load_shared(slot::<T>(warps, 0));
            for w in 1..threads.div_ceil(WARP) {
                if w == warp {
                    prefix = if lane == 0 { aggregate } else { O::apply(aggregate, prefix, record) };
                }
                aggregate = O::apply(aggregate, T::load_shared(slot::<T>(warps, w)), record);
            }
            (prefix, aggregate)
        }
    }
    #[inline(always)]
    fn calls_back(block: Block) -> bool {
        block.rank < WARP
    }
}

/// Scans one tile (the calling thread's `item(i)` is tile index `rank * IPT + i`), writes its scanned items with
/// `write(i, value)` and returns the block aggregate (the seed not among it); every thread calls it together. With
/// [`Seed::Prefix`] the threads [`Algorithm::calls_back`] names call the callback with the aggregate (advancing
/// `state`), and thread 0's return value reaches every thread through the scratch. The scratch is `threads + WARP
/// + 1` items. Each item is read where it is used: no array of items exists for a loop that LLVM does not unroll
/// (a wide operator at 16 items) to put in local memory.
#[inline(always)]
pub unsafe fn block_scan<T: Operand, O: Operator<T>, A: Algorithm, const IPT: usize>(
    block: Block, item: impl Fn(usize) -> T, mut write: impl FnMut(usize, T), inclusive: bool, seed: Seed,
    state: &mut SeedState<T>, record: &mut Record<T>,
) -> T {
    let mut partial = item(0);
    for i in 1..IPT {
        partial = O::apply(partial, item(i), record);
    }
    unsafe {
        let (mut prefix, aggregate) = A::prefixes::<T, O>(block, partial, record);
        sync_block(); // every prefix is read: the scratch is free again
        let mut lead = state.value;
        if seed == Seed::Prefix {
            if A::calls_back(block) {
                state.value = O::apply(lead, aggregate, record);
                state.argument = aggregate;
                state.calls = state.calls.plus(T::ONE);
            }
            let broadcast = slot::<T>(scratch(), block.threads + WARP);
            if block.rank == 0 {
                lead.store_shared(broadcast);
            }
            sync_block();
            lead = T::load_shared(broadcast);
        }
        let mut has_prefix = block.rank > 0;
        if seed != Seed::None {
            prefix = if has_prefix { O::apply(lead, prefix, record) } else { lead };
            has_prefix = true;
        }
        let mut x = prefix;
        for i in 0..IPT {
            let value = item(i);
            let folded = if has_prefix || i > 0 { O::apply(x, value, record) } else { value };
            // an exclusive scan without a seed has no item 0 (a sum's is 0)
            write(i, if inclusive { folded } else if has_prefix || i > 0 { x } else { T::ZERO });
            x = folded;
        }
        sync_block(); // the caller may reuse the scratch as soon as this returns
        aggregate
    }
}

/// The body of `scan_kernels`'s entries (their ABI is there): each tile's items in, the block scan, its items,
/// aggregate and the callback calls out.
#[inline(always)]
pub unsafe fn scan_kernel<T: Operand, O: Operator<T>, A: Algorithm, const IPT: usize>(
    items: *const T, initial: *const T, dst: *mut T, mode: i64, seed: i64,
) {
    let block = Block::current();
    let seed = Seed::of(seed);
    // A 32-bit trip count, and the calls written in the last tile rather than after the loop: otherwise ptxas for
    // sm_80 leaves this loop of barriers through a CALL.REL.NOINC, which the contract forbids (either change alone
    // left it in 61 of 66 entries built for int8, uint64 and float16).
    let tiles: u32 = if seed == Seed::Prefix { PREFIX_TILES as u32 } else { 1 };
    let (b, threads, rank) = (block.index as usize, block.threads as usize, block.rank as usize);
    let (n, tile) = (tiles as usize, threads * IPT);
    unsafe {
        let dst = dst.add(b * (n * (tile + threads) + threads));
        let value = if seed == Seed::None { T::ZERO } else { initial.add(b).read() };
        let mut state = SeedState { value, argument: T::ZERO, calls: T::ZERO };
        let mut record = Record { sentinel: T::ZERO, seen: false }; // no operator of the family records
        for k in 0..tiles {
            let k = k as usize;
            let first = (b * n + k) * tile + rank * IPT;
            let item = |i: usize| items.add(first + i).read();
            let scanned = dst.add(k * tile + rank * IPT);
            let aggregate = block_scan::<T, O, A, IPT>(
                block, item, |i, v| scanned.add(i).write(v), mode == INCLUSIVE, seed, &mut state, &mut record,
            );
            let seen = if seed == Seed::Prefix { state.argument } else { aggregate };
            dst.add(n * tile + k * threads + rank).write(seen);
            if k + 1 == n {
                dst.add(n * (tile + threads) + rank).write(state.calls);
            }
        }
    }
}
