//! The Warp Reduce kernels of `coopcheck.warp_reduce`'s batched ABI, one exported entry per dtype and operator;
//! the logical warp's width and the mode are run-time parameters of the entry (uniform per launch), so the 24
//! specializations of a dtype and operator that differ in them share it. The body is
//! [`crate::warp_reduce::warp_reduce_kernel`].
//!
//! Grid `n_blocks x 1 x 1`, one block per case instance, one item a thread. C-level parameters: `(const T *items,
//! const uint8_t *flags, const int32_t *valid, const T *sentinel, T *dst, int64_t width, int64_t mode)`, width 1 to
//! 32, mode 0 reduce, 1 head, 2 tail. Thread `rank` of block `b` reduces `items[b * threads + rank]` with flag
//! `flags[b * threads + rank]` (valid lanes: `valid[b]`) and writes its return value to `dst[b * 2 * threads +
//! rank]` and its seen flag (1 where its operator met an operand equal to `sentinel[b]`, else 0, in the dtype) to
//! `dst[b * 2 * threads + threads + rank]`. No shared memory.

use crate::operator::{First, Matmul, Max, Min, Sum, F16};
use crate::warp_reduce::warp_reduce_kernel;

/// Exports, for every dtype listed, an entry of every operator of the dtype's class (matmul for integers only).
macro_rules! export {
    (integers { $($int:ident: $it:ident),* } floats { $($float:ident: $ft:ident),* }) => {
        $( export!(@dtype $int $it [sum: Sum, min: Min, max: Max, matmul: Matmul, first: First]); )*
        $( export!(@dtype $float $ft [sum: Sum, min: Min, max: Max, first: First]); )*
    };
    (@dtype $dtype:ident $t:ident [$($op:ident: $O:ident),*]) => {
        $(
            // An anonymous scope per entry: the Rust names never clash, the exported names are unique.
            const _: () = {
                #[unsafe(export_name = concat!(
                    "coop_warp_reduce__", stringify!($dtype), "__ipt1__any__", stringify!($op)
                ))]
                unsafe extern "ptx-kernel" fn entry(items: *const $t, flags: *const u8, valid: *const i32,
                                                    sentinel: *const $t, dst: *mut $t, width: i64, mode: i64) {
                    unsafe { warp_reduce_kernel::<$t, $O>(items, flags, valid, sentinel, dst, width, mode) }
                }
            };
        )*
    };
}

export! {
    integers { uint8: u8, int8: i8, int16: i16, uint16: u16, int32: i32, uint32: u32, int64: i64, uint64: u64 }
    floats { float16: F16, float32: f32, float64: f64 }
}
