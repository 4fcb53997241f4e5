//! The Exchange kernels of `coopcheck.exchange`'s batched ABI, one exported entry per
//! specialization (dtype, items_per_thread, method, time-slicing, output).
//!
//! Grid `n_blocks x 1 x 1`, one block per case instance; `tile = threads * IPT`. C-level
//! parameters: `(const T *items, const int32_t *ranks, const int32_t *flags, T *dst)`. Thread `rank`
//! of block `b` exchanges `items[b * tile + rank * IPT + i]` (with their ranks and flags) and writes
//! the result to `dst[b * out + rank * IPT + i]`; with a separate output (`out = 2 * tile`) also its
//! input items, as the call left them, a tile later. In place (`out = tile`) the call's result
//! replaces the thread's items. The launch passes the scratch as dynamic shared memory: `tile`
//! items, or time-sliced `min(threads, 32) * IPT`.

use crate::block::Block;
use crate::exchange::{
    exchange, BlockedToStriped, BlockedToWarpStriped, Method, ScatterToBlocked, ScatterToStriped,
    ScatterToStripedFlagged, ScatterToStripedGuarded, StripedToBlocked, WarpStripedToBlocked,
};
use crate::item::Item;
use crate::kernels::payload_of;

/// The kernel body: the thread's items, ranks and flags in, the method's exchange, `dst` out.
#[inline(always)]
pub unsafe fn exchange_kernel<T: Item, M: Method, const IPT: usize, const SLICED: bool, const INPLACE: bool>(
    items: *const T, ranks: *const i32, flags: *const i32, dst: *mut T,
) {
    let block = Block::current();
    let slot = payload_of::<IPT>(block);
    let tile = block.threads as usize * IPT;
    let first = block.index as usize * tile * if INPLACE { 1 } else { 2 } + block.rank as usize * IPT;
    unsafe {
        let mut held: [T; IPT] = core::array::from_fn(|i| items.add(slot + i).read());
        let held_ranks: [i32; IPT] = core::array::from_fn(|i| ranks.add(slot + i).read());
        let held_flags: [i32; IPT] = core::array::from_fn(|i| flags.add(slot + i).read());
        if INPLACE {
            held = exchange::<T, M, IPT, SLICED>(block, &held, &held_ranks, &held_flags);
            for (i, item) in held.iter().enumerate() {
                dst.add(first + i).write(*item);
            }
        } else {
            let out = exchange::<T, M, IPT, SLICED>(block, &held, &held_ranks, &held_flags);
            for i in 0..IPT {
                dst.add(first + i).write(out[i]);
                dst.add(first + tile + i).write(held[i]);
            }
        }
    }
}

/// Exports the four entries (time-slicing off/on x in place/separate) of every (dtype,
/// items_per_thread, method) listed.
macro_rules! export {
    (dtypes { $($dtype:ident: $t:ident),* } ipts $ipts:tt methods $methods:tt) => {
        $( export!(@dtype $dtype $t $ipts $methods); )*
    };
    (@dtype $dtype:ident $t:ident [$($ipt:literal)*] $methods:tt) => {
        $( export!(@ipt $dtype $t $ipt $methods); )*
    };
    (@ipt $dtype:ident $t:ident $ipt:literal [$($method:ident: $M:ident),*]) => {
        $(
            export!(@one $dtype $t $ipt $method $M off false inplace true);
            export!(@one $dtype $t $ipt $method $M off false separate false);
            export!(@one $dtype $t $ipt $method $M on true inplace true);
            export!(@one $dtype $t $ipt $method $M on true separate false);
        )*
    };
    (@one $dtype:ident $t:ident $ipt:literal $method:ident $M:ident $slicing:ident $sliced:literal
     $output:ident $inplace:literal) => {
        // An anonymous scope per entry: the Rust names never clash, the exported names are unique.
        const _: () = {
            #[unsafe(export_name = concat!(
                "coop_block_exchange__", stringify!($dtype), "__ipt", stringify!($ipt), "__", stringify!($method),
                "__", stringify!($slicing), "__", stringify!($output)
            ))]
            unsafe extern "ptx-kernel" fn entry(items: *const $t, ranks: *const i32, flags: *const i32, dst: *mut $t) {
                unsafe { exchange_kernel::<$t, $M, $ipt, $sliced, $inplace>(items, ranks, flags, dst) }
            }
        };
    };
}

export! {
    dtypes {
        uint8: u8, int8: i8, int16: i16, uint16: u16, int32: i32, uint32: u32, int64: i64,
        uint64: u64, float16: u16, float32: f32, float64: f64
    }
    ipts [1 2 3 4 7 8]
    methods [
        striped_to_blocked: StripedToBlocked, blocked_to_striped: BlockedToStriped,
        warp_striped_to_blocked: WarpStripedToBlocked, blocked_to_warp_striped: BlockedToWarpStriped,
        scatter_to_blocked: ScatterToBlocked, scatter_to_striped: ScatterToStriped,
        scatter_to_striped_guarded: ScatterToStripedGuarded, scatter_to_striped_flagged: ScatterToStripedFlagged
    ]
}
