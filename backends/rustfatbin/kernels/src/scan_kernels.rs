//! The Scan kernels of `coopcheck.scan`'s batched ABI, one exported entry per dtype, items_per_thread, algorithm
//! and operator; the mode and the seed are run-time parameters of the entry, so six specializations of the
//! contract share it (one entry each would make the crate's build several times as long). The body is
//! [`crate::scan::scan_kernel`].
//!
//! Grid `n_blocks x 1 x 1`, one block per case instance; `tile = threads * IPT`. C-level parameters: `(const T
//! *items, const T *initial, T *dst, int64_t mode, int64_t seed)`, mode 0 inclusive, 1 exclusive; seed 0 none, 1
//! initial, 2 prefix (then the block scans [`crate::scan::PREFIX_TILES`] tiles, else one). Thread `rank` of block
//! `b` scans `items[(b * tiles + k) * tile + rank * IPT + i]` of tile `k`, seeded by `initial[b]` (the callback's
//! first running prefix with seed prefix), writes its scanned items to `dst[b * out + k * tile + rank * IPT + i]`,
//! the block aggregate it received (with seed prefix: its callback's argument) to `dst[b * out + tiles * tile + k *
//! threads + rank]` and its callback calls, in the dtype, to `dst[b * out + tiles * tile + tiles * threads +
//! rank]`, where `out = tiles * (tile + threads) + threads`. The launch passes `threads + 33` items of dynamic
//! shared memory.

use crate::operator::{Matmul, Max, Min, Sum, F16};
use crate::scan::{scan_kernel, Raking, RakingMemoize, WarpScans};

/// Exports, for every dtype and items_per_thread listed, every algorithm with every operator of the dtype's class
/// (matmul for integers only).
macro_rules! export {
    (integers { $($int:ident: $it:ident),* } floats { $($float:ident: $ft:ident),* } ipts $ipts:tt) => {
        $( export!(@dtype $int $it $ipts [sum: Sum, min: Min, max: Max, matmul: Matmul]); )*
        $( export!(@dtype $float $ft $ipts [sum: Sum, min: Min, max: Max]); )*
    };
    (@dtype $dtype:ident $t:ident [$($ipt:literal)*] $ops:tt) => {
        $( export!(@ipt $dtype $t $ipt $ops); )*
    };
    (@ipt $dtype:ident $t:ident $ipt:literal [$($op:ident: $O:ident),*]) => {
        $(
            export!(@one $dtype $t $ipt raking Raking $op $O);
            export!(@one $dtype $t $ipt raking_memoize RakingMemoize $op $O);
            export!(@one $dtype $t $ipt warp_scans WarpScans $op $O);
        )*
    };
    (@one $dtype:ident $t:ident $ipt:literal $alg:ident $A:ident $op:ident $O:ident) => {
        // An anonymous scope per entry: the Rust names never clash, the exported names are unique.
        const _: () = {
            #[unsafe(export_name = concat!(
                "coop_block_scan__", stringify!($dtype), "__ipt", stringify!($ipt), "__", stringify!($alg),
                "__", stringify!($op)
            ))]
            unsafe extern "ptx-kernel" fn entry(items: *const $t, initial: *const $t, dst: *mut $t, mode: i64,
                                                seed: i64) {
                unsafe { scan_kernel::<$t, $O, $A, $ipt>(items, initial, dst, mode, seed) }
            }
        };
    };
}

export! {
    integers { uint8: u8, int8: i8, int16: i16, uint16: u16, int32: i32, uint32: u32, int64: i64, uint64: u64 }
    floats { float16: F16, float32: f32, float64: f64 }
    ipts [1 2 4 7 16]
}
