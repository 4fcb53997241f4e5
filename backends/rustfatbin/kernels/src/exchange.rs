//! Block Exchange: CUB's eight methods, with and without warp time-slicing (the arrangements and
//! rules are `coopcheck.exchange`'s).
//!
//! Every method is one store step (each item into scratch at its key: its tile index in the input
//! arrangement, or its rank) and one load step (each output item from scratch at its tile index in
//! the output arrangement) across a barrier: the block's for the block methods, the warp's for the
//! warp methods, whose warps each exchange their own share of the tile. Time-sliced, the tile
//! passes through one warp's share of scratch a slice at a time. A key outside the scratch window
//! is never stored, so the items the guarded and flagged scatters skip (a negative key) are
//! written nowhere, time-sliced too (CUB's read and write out of bounds there: NVIDIA/cccl#870).
//! The result is a new array, so a call in place reads every input item before it writes one.

use core::mem::size_of;

use crate::block::{Block, WARP};
use crate::item::Item;
use crate::shared::{scratch, sync_block, sync_lanes};

/// Where a thread's item `i` lives in the tile, per arrangement.
pub trait Arrangement {
    fn index(block: Block, i: u32, ipt: u32) -> u32;
}

/// Tile index `rank * ipt + i`.
pub struct Blocked;
/// Tile index `rank + i * threads`.
pub struct Striped;
/// Within warp `w`, lane `l`'s item `i` is `w * 32 * ipt + i * W + l`, `W = min(threads, 32)`.
pub struct WarpStriped;

impl Arrangement for Blocked {
    #[inline(always)]
    fn index(block: Block, i: u32, ipt: u32) -> u32 {
        block.rank * ipt + i
    }
}

impl Arrangement for Striped {
    #[inline(always)]
    fn index(block: Block, i: u32, _ipt: u32) -> u32 {
        block.rank + i * block.threads
    }
}

impl Arrangement for WarpStriped {
    #[inline(always)]
    fn index(block: Block, i: u32, ipt: u32) -> u32 {
        let lanes = if block.threads < WARP { block.threads } else { WARP };
        block.rank / WARP * (WARP * ipt) + i * lanes + block.rank % WARP
    }
}

/// Where each item is stored (its key: a negative one is never stored) and which arrangement the
/// output is in.
pub trait Method {
    type Output: Arrangement;
    /// Each warp exchanges its own share of the tile, behind a warp barrier.
    const WARP_ONLY: bool;
    fn key(block: Block, i: u32, ipt: u32, rank: i32, flag: i32) -> i32;
}

/// A method that moves the input arrangement `In` to the output arrangement `O`.
pub struct Rearrange<In, O, const WARP_ONLY: bool>(core::marker::PhantomData<(In, O)>);
pub type StripedToBlocked = Rearrange<Striped, Blocked, false>;
pub type BlockedToStriped = Rearrange<Blocked, Striped, false>;
pub type WarpStripedToBlocked = Rearrange<WarpStriped, Blocked, true>;
pub type BlockedToWarpStriped = Rearrange<Blocked, WarpStriped, true>;

impl<In: Arrangement, O: Arrangement, const WARP_ONLY: bool> Method for Rearrange<In, O, WARP_ONLY> {
    type Output = O;
    const WARP_ONLY: bool = WARP_ONLY;
    #[inline(always)]
    fn key(block: Block, i: u32, ipt: u32, _rank: i32, _flag: i32) -> i32 {
        In::index(block, i, ipt) as i32
    }
}

/// A scatter: item `s` goes to tile index `ranks[s]` of arrangement `O`; `FLAGGED`, only where
/// its flag is nonzero. A negative rank (the guarded scatter's skip) is a negative key.
pub struct Scatter<O, const FLAGGED: bool>(core::marker::PhantomData<O>);
pub type ScatterToBlocked = Scatter<Blocked, false>;
pub type ScatterToStriped = Scatter<Striped, false>;
pub type ScatterToStripedGuarded = Scatter<Striped, false>;
pub type ScatterToStripedFlagged = Scatter<Striped, true>;

impl<O: Arrangement, const FLAGGED: bool> Method for Scatter<O, FLAGGED> {
    type Output = O;
    const WARP_ONLY: bool = false;
    #[inline(always)]
    fn key(_block: Block, _i: u32, _ipt: u32, rank: i32, flag: i32) -> i32 {
        if FLAGGED && flag == 0 { -1 } else { rank }
    }
}

/// Shared-window address of scratch element `index`.
#[inline(always)]
fn slot<T>(base: u32, index: u32) -> u32 {
    base + index * size_of::<T>() as u32
}

/// The barrier the method's exchange needs: the block's, or the calling warp's existing lanes.
#[inline(always)]
unsafe fn sync<M: Method>(block: Block) {
    unsafe {
        if M::WARP_ONLY {
            let lanes = block.threads - block.rank / WARP * WARP;
            sync_lanes(if lanes >= WARP { u32::MAX } else { (1u32 << lanes) - 1 });
        } else {
            sync_block();
        }
    }
}

/// Every item whose key lies in `[lo, lo + window)` into scratch at `key - lo` (a negative key,
/// read unsigned, lies past any window).
#[inline(always)]
unsafe fn store_window<T: Item, const IPT: usize>(base: u32, items: &[T; IPT], keys: &[i32; IPT], lo: u32,
                                                 window: u32) {
    for (item, &key) in items.iter().zip(keys) {
        let at = (key as u32).wrapping_sub(lo);
        if at < window {
            unsafe { item.store_shared(slot::<T>(base, at)) };
        }
    }
}

/// Every output item whose tile index lies in `[lo, lo + window)` from scratch at `index - lo`.
#[inline(always)]
unsafe fn load_window<T: Item, O: Arrangement, const IPT: usize>(block: Block, base: u32, out: &mut [T; IPT],
                                                                lo: u32, window: u32) {
    for (i, item) in out.iter_mut().enumerate() {
        let at = O::index(block, i as u32, IPT as u32).wrapping_sub(lo);
        if at < window {
            *item = unsafe { T::load_shared(slot::<T>(base, at)) };
        }
    }
}

/// The exchanged items of the calling thread; every thread of the block calls it together. The
/// scratch is `tile` items, or time-sliced (`SLICED`) `min(threads, 32) * IPT`. An output slot no
/// item went to keeps the input item of that slot.
#[inline(always)]
pub unsafe fn exchange<T: Item, M: Method, const IPT: usize, const SLICED: bool>(
    block: Block, items: &[T; IPT], ranks: &[i32; IPT], flags: &[i32; IPT],
) -> [T; IPT] {
    let base = scratch();
    let keys: [i32; IPT] = core::array::from_fn(|i| M::key(block, i as u32, IPT as u32, ranks[i], flags[i]));
    let mut out = *items;
    unsafe {
        if SLICED {
            let window = if block.threads < WARP { block.threads } else { WARP } * IPT as u32;
            for slice in 0..block.threads.div_ceil(WARP) {
                let lo = slice * window;
                sync_block(); // every load of the slice before is done: the scratch is free again
                store_window(base, items, &keys, lo, window);
                sync_block();
                load_window::<T, M::Output, IPT>(block, base, &mut out, lo, window);
            }
            sync_block(); // the caller may reuse the scratch as soon as this returns
        } else {
            let tile = block.threads * IPT as u32;
            store_window(base, items, &keys, 0, tile);
            sync::<M>(block);
            load_window::<T, M::Output, IPT>(block, base, &mut out, 0, tile);
            sync::<M>(block); // the caller may reuse the scratch as soon as this returns
        }
    }
    out
}

