//! The Shuffle kernels of `coopcheck.shuffle`'s batched ABI, one exported entry per specialization
//! (dtype, items_per_thread, method, output).
//!
//! Grid `n_blocks x 1 x 1`, one block per case instance; `tile = threads * IPT`. C-level
//! parameters: `(const T *items, const T *prior, const int32_t *distance, T *dst)`. Thread `rank`
//! of block `b` shuffles `items[b * tile + rank * IPT + i]` by `distance[b]` (offset and rotate);
//! in place its output starts as those items, separate as `prior[b * (tile + threads) + rank * IPT
//! + i]`, and its block item as `prior[b * (tile + threads) + tile + rank]`. It writes the output to
//! `dst[b * out + rank * IPT + i]`; separate, then its input items a tile later; up_suffix and
//! down_prefix then the block item at `dst[b * out + out - threads + rank]`. The launch passes
//! `threads` items of dynamic shared memory.

use crate::block::Block;
use crate::item::Item;
use crate::kernels::payload_of;
use crate::shuffle::{Down, DownPrefix, Method, Offset, Rotate, Up, UpSuffix};

/// The kernel body: items (and prior outputs) in, the method's shuffle, `dst` out.
#[inline(always)]
pub unsafe fn shuffle_kernel<T: Item, M: Method, const IPT: usize, const INPLACE: bool>(
    items: *const T, prior: *const T, distance: *const i32, dst: *mut T,
) {
    let block = Block::current();
    let slot = payload_of::<IPT>(block);
    let (threads, rank, b) = (block.threads as usize, block.rank as usize, block.index as usize);
    let tile = threads * IPT;
    let width = tile * if INPLACE { 1 } else { 2 } + if M::BLOCK_ITEM { threads } else { 0 };
    let first_prior = b * (tile + threads);
    let first = b * width + rank * IPT;
    unsafe {
        let held: [T; IPT] = core::array::from_fn(|i| items.add(slot + i).read());
        let mut out: [T; IPT] = if INPLACE { held } else {
            core::array::from_fn(|i| prior.add(first_prior + rank * IPT + i).read())
        };
        let mut block_item = prior.add(first_prior + tile + rank).read();
        M::shuffle(block, &held, &mut out, distance.add(b).read(), &mut block_item);
        for i in 0..IPT {
            dst.add(first + i).write(out[i]);
            if !INPLACE {
                dst.add(first + tile + i).write(held[i]);
            }
        }
        if M::BLOCK_ITEM {
            dst.add(b * width + width - threads + rank).write(block_item);
        }
    }
}

/// Exports the in-place and separate entries of every (dtype, items_per_thread, method) listed.
macro_rules! export {
    (dtypes { $($dtype:ident: $t:ident),* } shapes $shapes:tt) => {
        $( export!(@dtype $dtype $t $shapes); )*
    };
    (@dtype $dtype:ident $t:ident { $(ipts $ipts:tt methods [$($method:ident: $M:ident),*])* }) => {
        $($( export!(@method $dtype $t $ipts $method $M); )*)*
    };
    (@method $dtype:ident $t:ident [$($ipt:literal)*] $method:ident $M:ident) => {
        $(
            export!(@one $dtype $t $ipt $method $M inplace true);
            export!(@one $dtype $t $ipt $method $M separate false);
        )*
    };
    (@one $dtype:ident $t:ident $ipt:literal $method:ident $M:ident $output:ident $inplace:literal) => {
        // An anonymous scope per entry: the Rust names never clash, the exported names are unique.
        const _: () = {
            #[unsafe(export_name = concat!(
                "coop_block_shuffle__", stringify!($dtype), "__ipt", stringify!($ipt), "__", stringify!($method),
                "__", stringify!($output)
            ))]
            unsafe extern "ptx-kernel" fn entry(items: *const $t, prior: *const $t, distance: *const i32, dst: *mut $t) {
                unsafe { shuffle_kernel::<$t, $M, $ipt, $inplace>(items, prior, distance, dst) }
            }
        };
    };
}

export! {
    dtypes {
        uint8: u8, int8: i8, int16: i16, uint16: u16, int32: i32, uint32: u32, int64: i64,
        uint64: u64, float16: u16, float32: f32, float64: f64
    }
    shapes {
        // offset and rotate move one item per thread: items_per_thread 1 only (the rule shuffle_scalar).
        ipts [1] methods [offset: Offset, rotate: Rotate]
        ipts [1 2 3 4 7 8] methods [up: Up, down: Down, up_suffix: UpSuffix, down_prefix: DownPrefix]
    }
}
