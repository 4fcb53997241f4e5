//! The Load/Store algorithms: where item `i` of a thread lives in the tile and how it gets there.
//!
//! Every algorithm but `Striped` gives the blocked arrangement (item `i` of rank `r` is tile index
//! `r * IPT + i`); `Striped` gives `r + i * threads`. An item is valid iff its tile index is below
//! `valid`; an invalid payload slot takes `oob` when given and otherwise keeps its value, and a
//! Store writes nothing but the valid items.

use core::mem::size_of;

use crate::block::{Block, WARP};
use crate::item::Item;
use crate::shared::{scratch, sync_block, sync_warp};

pub trait Algorithm {
    /// Loads the calling thread's items of the tile at `src`.
    unsafe fn load<T: Item, const IPT: usize>(
        block: Block, src: *const T, items: &mut [T; IPT], valid: u32, oob: Option<T>,
    );
    /// Stores the calling thread's valid items into the tile at `dst`.
    unsafe fn store<T: Item, const IPT: usize>(block: Block, dst: *mut T, items: &[T; IPT], valid: u32);
}

/// Blocked arrangement, each thread reading and writing its own items one at a time.
pub struct Direct;
/// Striped arrangement: consecutive threads touch consecutive items (coalesced).
pub struct Striped;
/// Blocked arrangement with the widest aligned accesses (up to 16 bytes) a thread's items allow.
pub struct Vectorize;
/// Blocked arrangement through coalesced striped accesses and a block-wide exchange in scratch.
pub struct Transpose;
/// Like [`Transpose`], but each warp exchanges its own part of the tile (threads % 32 == 0).
pub struct WarpTranspose;

/// Sets `slot` from `read` when tile index `index` is valid, else to `oob` when one is given.
#[inline(always)]
fn take<T: Copy>(slot: &mut T, index: u32, valid: u32, oob: Option<T>, read: impl FnOnce() -> T) {
    if index < valid {
        *slot = read();
    } else if let Some(default) = oob {
        *slot = default;
    }
}

/// Loads the thread's items with tile indices `first + i * stride`.
#[inline(always)]
unsafe fn load_items<T: Item, const IPT: usize>(
    src: *const T, items: &mut [T; IPT], first: u32, stride: u32, valid: u32, oob: Option<T>,
) {
    for (i, slot) in items.iter_mut().enumerate() {
        let index = first + i as u32 * stride;
        take(slot, index, valid, oob, || unsafe { src.add(index as usize).read() });
    }
}

/// Stores the thread's valid items to tile indices `first + i * stride`.
#[inline(always)]
unsafe fn store_items<T: Item, const IPT: usize>(
    dst: *mut T, items: &[T; IPT], first: u32, stride: u32, valid: u32,
) {
    for (i, item) in items.iter().enumerate() {
        let index = first + i as u32 * stride;
        if index < valid {
            unsafe { dst.add(index as usize).write(*item) };
        }
    }
}

impl Algorithm for Direct {
    #[inline(always)]
    unsafe fn load<T: Item, const IPT: usize>(
        block: Block, src: *const T, items: &mut [T; IPT], valid: u32, oob: Option<T>,
    ) {
        unsafe { load_items(src, items, block.rank * IPT as u32, 1, valid, oob) }
    }

    #[inline(always)]
    unsafe fn store<T: Item, const IPT: usize>(block: Block, dst: *mut T, items: &[T; IPT], valid: u32) {
        unsafe { store_items(dst, items, block.rank * IPT as u32, 1, valid) }
    }
}

impl Algorithm for Striped {
    #[inline(always)]
    unsafe fn load<T: Item, const IPT: usize>(
        block: Block, src: *const T, items: &mut [T; IPT], valid: u32, oob: Option<T>,
    ) {
        unsafe { load_items(src, items, block.rank, block.threads, valid, oob) }
    }

    #[inline(always)]
    unsafe fn store<T: Item, const IPT: usize>(block: Block, dst: *mut T, items: &[T; IPT], valid: u32) {
        unsafe { store_items(dst, items, block.rank, block.threads, valid) }
    }
}

/// A 16-byte access unit (`ld.global.v4.b32`).
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Wide16([u32; 4]);

/// The widest power-of-two access (at most 16 bytes) that divides a thread's `bytes` of items.
const fn access_bytes(bytes: usize) -> usize {
    let mut width = 16;
    while bytes % width != 0 {
        width /= 2;
    }
    width
}

/// Moves `bytes` bytes between the tile at `tile` and the payload at `payload` in units of `W`
/// (tile to payload when `LOAD`), provided `tile` is `W`-aligned; returns whether it did.
#[inline(always)]
unsafe fn copy_aligned<W: Copy, const LOAD: bool>(tile: *mut u8, payload: *mut u8, bytes: usize) -> bool {
    if tile as usize % size_of::<W>() != 0 {
        return false;
    }
    let (tile, payload) = (tile as *mut W, payload as *mut W);
    for j in 0..bytes / size_of::<W>() {
        // The payload is a `[T; IPT]`, aligned for `T` only.
        unsafe {
            if LOAD {
                payload.add(j).write_unaligned(tile.add(j).read());
            } else {
                tile.add(j).write(payload.add(j).read_unaligned());
            }
        }
    }
    true
}

/// Moves a thread's whole segment of `IPT` items in the widest units that divide it, when that is
/// wider than one item and the tile side is aligned; returns whether it did. The width is a
/// constant, so each specialization keeps one arm.
#[inline(always)]
unsafe fn copy_segment<T, const IPT: usize, const LOAD: bool>(tile: *mut u8, payload: *mut u8) -> bool {
    let bytes = IPT * size_of::<T>();
    unsafe {
        match const { access_bytes(IPT * size_of::<T>()) } {
            width if width <= size_of::<T>() => false,
            16 => copy_aligned::<Wide16, LOAD>(tile, payload, bytes),
            8 => copy_aligned::<u64, LOAD>(tile, payload, bytes),
            4 => copy_aligned::<u32, LOAD>(tile, payload, bytes),
            _ => copy_aligned::<u16, LOAD>(tile, payload, bytes),
        }
    }
}

impl Algorithm for Vectorize {
    /// A thread whose segment is not wholly valid, or a misaligned tile, falls back to `Direct`.
    #[inline(always)]
    unsafe fn load<T: Item, const IPT: usize>(
        block: Block, src: *const T, items: &mut [T; IPT], valid: u32, oob: Option<T>,
    ) {
        let first = block.rank * IPT as u32;
        let whole = first + IPT as u32 <= valid;
        let segment = unsafe { src.add(first as usize) } as *mut u8;
        if !(whole && unsafe { copy_segment::<T, IPT, true>(segment, items.as_mut_ptr() as *mut u8) }) {
            unsafe { load_items(src, items, first, 1, valid, oob) }
        }
    }

    #[inline(always)]
    unsafe fn store<T: Item, const IPT: usize>(block: Block, dst: *mut T, items: &[T; IPT], valid: u32) {
        let first = block.rank * IPT as u32;
        let whole = first + IPT as u32 <= valid;
        let segment = unsafe { dst.add(first as usize) } as *mut u8;
        if !(whole && unsafe { copy_segment::<T, IPT, false>(segment, items.as_ptr() as *mut u8) }) {
            unsafe { store_items(dst, items, first, 1, valid) }
        }
    }
}

/// Shared-window address of tile index `index` in the scratch at `base`.
#[inline(always)]
fn slot<T>(base: u32, index: u32) -> u32 {
    base + index * size_of::<T>() as u32
}

/// A transposing exchange through scratch: which tile indices the thread moves in striped order,
/// and the barrier of the group (block or warp) that exchanges.
trait Exchange {
    /// `(first, stride)`: the thread's striped tile indices are `first + i * stride`.
    fn striped(block: Block, ipt: u32) -> (u32, u32);
    unsafe fn sync();
}

impl Exchange for Transpose {
    #[inline(always)]
    fn striped(block: Block, _ipt: u32) -> (u32, u32) {
        (block.rank, block.threads)
    }
    #[inline(always)]
    unsafe fn sync() {
        unsafe { sync_block() }
    }
}

impl Exchange for WarpTranspose {
    #[inline(always)]
    fn striped(block: Block, ipt: u32) -> (u32, u32) {
        let (warp, lane) = (block.rank / WARP, block.rank % WARP);
        (warp * WARP * ipt + lane, WARP)
    }
    #[inline(always)]
    unsafe fn sync() {
        unsafe { sync_warp() }
    }
}

impl<E: Exchange> Algorithm for E {
    /// Striped reads of the valid items into scratch, a barrier, then blocked reads of the valid
    /// items from scratch: invalid slots never see scratch, so they keep their value or take
    /// `oob`. The trailing barrier lets the caller reuse the scratch.
    #[inline(always)]
    unsafe fn load<T: Item, const IPT: usize>(
        block: Block, src: *const T, items: &mut [T; IPT], valid: u32, oob: Option<T>,
    ) {
        let base = scratch();
        let (first, stride) = E::striped(block, IPT as u32);
        for i in 0..IPT as u32 {
            let index = first + i * stride;
            if index < valid {
                unsafe { src.add(index as usize).read().store_shared(slot::<T>(base, index)) };
            }
        }
        unsafe { E::sync() };
        let blocked = block.rank * IPT as u32;
        for (i, item) in items.iter_mut().enumerate() {
            let index = blocked + i as u32;
            take(item, index, valid, oob, || unsafe { T::load_shared(slot::<T>(base, index)) });
        }
        unsafe { E::sync() };
    }

    /// Blocked writes of the valid items into scratch, a barrier, then striped writes of the
    /// valid items to `dst`, and a trailing barrier for scratch reuse.
    #[inline(always)]
    unsafe fn store<T: Item, const IPT: usize>(block: Block, dst: *mut T, items: &[T; IPT], valid: u32) {
        let base = scratch();
        let blocked = block.rank * IPT as u32;
        for (i, item) in items.iter().enumerate() {
            let index = blocked + i as u32;
            if index < valid {
                unsafe { item.store_shared(slot::<T>(base, index)) };
            }
        }
        unsafe { E::sync() };
        let (first, stride) = E::striped(block, IPT as u32);
        for i in 0..IPT as u32 {
            let index = first + i * stride;
            if index < valid {
                unsafe { dst.add(index as usize).write(T::load_shared(slot::<T>(base, index))) };
            }
        }
        unsafe { E::sync() };
    }
}
