//! The Warp Scan kernels of `coopcheck.warp_scan`'s batched ABI, one exported entry per dtype and operator; the
//! logical warp's width, the mode, the seed and the aggregate output are run-time parameters of the entry (uniform
//! per launch), so the 64 specializations of a dtype and operator that differ in them share it. The body is
//! [`crate::warp_scan::warp_scan_kernel`].
//!
//! Grid `n_blocks x 1 x 1`, one block per case instance, one item a thread. C-level parameters: `(const T *items,
//! const T *initial, T *dst, int64_t width, int64_t mode, int64_t seed, int64_t aggregate)`, width 1 to 32, mode 0
//! inclusive, 1 exclusive; seed 0 none, 1 initial; aggregate 0 on, 1 off. Thread `rank` of block `b` scans
//! `items[b * threads + rank]` (seeded by `initial[b]`) and writes its scanned item to `dst[b * out + rank]` and,
//! aggregate on, its logical warp's aggregate to `dst[b * out + threads + rank]`, where `out` is `2 * threads` with
//! the aggregate on, else `threads`. No shared memory.

use crate::operator::{Matmul, Max, Min, Sum, F16};
use crate::warp_scan::warp_scan_kernel;

/// Exports, for every dtype listed, an entry of every operator of the dtype's class (matmul for integers only).
macro_rules! export {
    (integers { $($int:ident: $it:ident),* } floats { $($float:ident: $ft:ident),* }) => {
        $( export!(@dtype $int $it [sum: Sum, min: Min, max: Max, matmul: Matmul]); )*
        $( export!(@dtype $float $ft [sum: Sum, min: Min, max: Max]); )*
    };
    (@dtype $dtype:ident $t:ident [$($op:ident: $O:ident),*]) => {
        $(
            // An anonymous scope per entry: the Rust names never clash, the exported names are unique.
            const _: () = {
                #[unsafe(export_name = concat!(
                    "coop_warp_scan__", stringify!($dtype), "__ipt1__any__", stringify!($op)
                ))]
                unsafe extern "ptx-kernel" fn entry(items: *const $t, initial: *const $t, dst: *mut $t, width: i64,
                                                    mode: i64, seed: i64, aggregate: i64) {
                    unsafe { warp_scan_kernel::<$t, $O>(items, initial, dst, width, mode, seed, aggregate) }
                }
            };
        )*
    };
}

export! {
    integers { uint8: u8, int8: i8, int16: i16, uint16: u16, int32: i32, uint32: u32, int64: i64, uint64: u64 }
    floats { float16: F16, float32: f32, float64: f64 }
}
