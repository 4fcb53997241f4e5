//! The Reduce kernels of `coopcheck.reduce`'s batched ABI, one exported entry per specialization (dtype,
//! items_per_thread, algorithm, operator).
//!
//! Grid `n_blocks x 1 x 1`, one block per case instance; `tile = threads * IPT`. C-level parameters:
//! `(const T *items, const int32_t *valid, const T *sentinel, T *dst)`. Thread `rank` of block `b` reduces
//! `items[b * tile + rank * IPT + i]`, of which the first `valid[b]` of the tile are valid, and writes its
//! return value to `dst[b * 2 * threads + rank]` and its seen flag (1 where the operator first met an operand
//! equal to `sentinel[b]`, else 0, in the dtype) to `dst[b * 2 * threads + threads + rank]`. The launch passes
//! `threads` items of dynamic shared memory.

use crate::block::Block;
use crate::kernels::payload_of;
use crate::operator::{First, Matmul, Max, Min, Operand, Operator, Record, Sum, F16};
use crate::reduce::{block_reduce, Algorithm, Raking, RakingCommutativeOnly, WarpReductions};

/// The kernel body: the thread's items in, the block reduction, its result and seen flag out.
#[inline(always)]
pub unsafe fn reduce_kernel<T: Operand, O: Operator<T>, A: Algorithm, const IPT: usize>(
    items: *const T, valid: *const i32, sentinel: *const T, dst: *mut T,
) {
    let block = Block::current();
    let slot = payload_of::<IPT>(block);
    let (b, threads) = (block.index as usize, block.threads as usize);
    unsafe {
        let item = |i: usize| items.add(slot + i).read();
        let mut record = Record { sentinel: sentinel.add(b).read(), seen: false };
        let result = block_reduce::<T, O, A, IPT>(block, item, valid.add(b).read().max(0) as u32, &mut record);
        let first = b * 2 * threads + block.rank as usize;
        dst.add(first).write(result);
        dst.add(first + threads).write(if record.seen { T::ONE } else { T::ZERO });
    }
}

/// Exports, for every dtype and items_per_thread listed, raking and warp_reductions with every operator of
/// the dtype's class (matmul for integers only) and raking_commutative_only with the commutative ones.
macro_rules! export {
    (integers { $($int:ident: $it:ident),* } floats { $($float:ident: $ft:ident),* } ipts $ipts:tt) => {
        $( export!(@dtype $int $it $ipts [sum: Sum, min: Min, max: Max, matmul: Matmul, first: First]); )*
        $( export!(@dtype $float $ft $ipts [sum: Sum, min: Min, max: Max, first: First]); )*
    };
    (@dtype $dtype:ident $t:ident [$($ipt:literal)*] $ops:tt) => {
        $( export!(@ipt $dtype $t $ipt $ops); )*
    };
    (@ipt $dtype:ident $t:ident $ipt:literal [$($op:ident: $O:ident),*]) => {
        $(
            export!(@one $dtype $t $ipt raking Raking $op $O);
            export!(@one $dtype $t $ipt warp_reductions WarpReductions $op $O);
        )*
        export!(@one $dtype $t $ipt raking_commutative_only RakingCommutativeOnly sum Sum);
        export!(@one $dtype $t $ipt raking_commutative_only RakingCommutativeOnly min Min);
        export!(@one $dtype $t $ipt raking_commutative_only RakingCommutativeOnly max Max);
    };
    (@one $dtype:ident $t:ident $ipt:literal $alg:ident $A:ident $op:ident $O:ident) => {
        // An anonymous scope per entry: the Rust names never clash, the exported names are unique.
        const _: () = {
            #[unsafe(export_name = concat!(
                "coop_block_reduce__", stringify!($dtype), "__ipt", stringify!($ipt), "__", stringify!($alg),
                "__", stringify!($op)
            ))]
            unsafe extern "ptx-kernel" fn entry(items: *const $t, valid: *const i32, sentinel: *const $t, dst: *mut $t) {
                unsafe { reduce_kernel::<$t, $O, $A, $ipt>(items, valid, sentinel, dst) }
            }
        };
    };
}

export! {
    integers { uint8: u8, int8: i8, int16: i16, uint16: u16, int32: i32, uint32: u32, int64: i64, uint64: u64 }
    floats { float16: F16, float32: f32, float64: f64 }
    ipts [1 2 3 4 7 16]
}
