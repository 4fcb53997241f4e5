//! Block Shuffle: CUB's Offset, Rotate, Up and Down, and Up / Down with their block item (the
//! methods and rules are `coopcheck.shuffle`'s).
//!
//! As CUB's BlockShuffle, every method stores one item a thread in scratch of one item a thread
//! (offset and rotate: the thread's item; up: its last; down: its first) and after a block barrier
//! reads its neighbour's; a second barrier lets the caller reuse the scratch once the call returns.
//! `out` starts as what an output left as it was holds (the thread's own items in place, the
//! output's prior values when separate); the input is only read.

use crate::block::Block;
use crate::item::Item;
use crate::shared::{scratch, sync_block};

pub trait Method {
    /// Whether the method also gives every thread a block item (up_suffix, down_prefix).
    const BLOCK_ITEM: bool = false;
    /// The calling thread's output items into `out` (and for the block item forms `block_item`).
    unsafe fn shuffle<T: Item, const IPT: usize>(
        block: Block, items: &[T; IPT], out: &mut [T; IPT], distance: i32, block_item: &mut T,
    );
}

/// Thread `r` takes the item of thread `r + distance` where it exists (ipt 1).
pub struct Offset;
/// Thread `r` takes the item of thread `(r + distance) mod threads`, `0 < distance < threads`.
pub struct Rotate;
/// The tile shifted by one item: `UP`, index `t` takes `t - 1`; else `t` takes `t + 1`. `WITH_ITEM`:
/// every thread's block item becomes the far end's (up: the last input item, down: the first).
pub struct Shift<const UP: bool, const WITH_ITEM: bool>;
pub type Up = Shift<true, false>;
pub type Down = Shift<false, false>;
pub type UpSuffix = Shift<true, true>;
pub type DownPrefix = Shift<false, true>;

/// Scratch address of thread `rank`'s item.
#[inline(always)]
fn slot<T>(base: u32, rank: u32) -> u32 {
    base + rank * core::mem::size_of::<T>() as u32
}

/// Stores the thread's `item`, then after a barrier gives `take` the scratch address of any
/// thread's item, then the barrier that frees the scratch.
#[inline(always)]
unsafe fn through_scratch<T: Item>(block: Block, item: T, take: impl FnOnce(u32)) {
    let base = scratch();
    unsafe {
        item.store_shared(slot::<T>(base, block.rank));
        sync_block();
    }
    take(base);
    unsafe { sync_block() };
}

impl Method for Offset {
    #[inline(always)]
    unsafe fn shuffle<T: Item, const IPT: usize>(
        block: Block, items: &[T; IPT], out: &mut [T; IPT], distance: i32, _block_item: &mut T,
    ) {
        unsafe {
            through_scratch(block, items[0], |base| {
                let from = block.rank as i32 + distance;
                if 0 <= from && (from as u32) < block.threads {
                    out[0] = T::load_shared(slot::<T>(base, from as u32));
                }
            })
        }
    }
}

impl Method for Rotate {
    #[inline(always)]
    unsafe fn shuffle<T: Item, const IPT: usize>(
        block: Block, items: &[T; IPT], out: &mut [T; IPT], distance: i32, _block_item: &mut T,
    ) {
        unsafe {
            through_scratch(block, items[0], |base| {
                let mut from = block.rank + distance as u32;
                if from >= block.threads {
                    from -= block.threads;
                }
                out[0] = T::load_shared(slot::<T>(base, from));
            })
        }
    }
}

impl<const UP: bool, const WITH_ITEM: bool> Method for Shift<UP, WITH_ITEM> {
    const BLOCK_ITEM: bool = WITH_ITEM;

    #[inline(always)]
    unsafe fn shuffle<T: Item, const IPT: usize>(
        block: Block, items: &[T; IPT], out: &mut [T; IPT], _distance: i32, block_item: &mut T,
    ) {
        // The item handed to the neighbour (up: the last, down: the first) and the slot taken from it.
        let (handed, taken) = if UP { (IPT - 1, 0) } else { (0, IPT - 1) };
        let edge = if UP { 0 } else { block.threads - 1 };
        unsafe {
            through_scratch(block, items[handed], |base| {
                for i in 0..IPT - 1 {
                    if UP {
                        out[i + 1] = items[i];
                    } else {
                        out[i] = items[i + 1];
                    }
                }
                if block.rank != edge {
                    let neighbour = if UP { block.rank - 1 } else { block.rank + 1 };
                    out[taken] = T::load_shared(slot::<T>(base, neighbour));
                }
                if WITH_ITEM {
                    *block_item = T::load_shared(slot::<T>(base, if UP { block.threads - 1 } else { 0 }));
                }
            })
        }
    }
}
