//! The batched kernel ABI of `coopcheck.adapter` and one exported entry per specialization.
//!
//! Grid `n_blocks x 1 x 1`, one block per case instance; `tile = threads * IPT`. C-level
//! parameters, in order:
//!
//! * Load: `(const T *src, const T *init, T *dst, const int32_t *valid, const int64_t *offset,
//!   const int32_t *has_oob, const T *oob, int64_t region)`
//! * Store: `(const T *items, T *dst, const int32_t *valid, const int64_t *offset,
//!   int64_t region)`
//!
//! where `T` is the dtype's storage type (`uint16_t` bits for float16). Block `b` works on the
//! tile at `src + b * region + offset[b]` (Load) or `dst + b * region + offset[b]` (Store) with
//! `valid[b]` valid items (a negative count counts as 0); thread `rank` keeps its payload at
//! `b * tile + rank * IPT + i` of `init`/`dst` (Load) or `items` (Store). The transpose family
//! needs `tile * sizeof(T)` bytes of dynamic shared memory at launch.

use crate::algorithm::{Algorithm, Direct, Striped, Transpose, Vectorize, WarpTranspose};
use crate::block::Block;
use crate::item::Item;

/// Element offset of this block's tile in `src`/`dst`, and its valid item count.
#[inline(always)]
unsafe fn tile_of(block: Block, valid: *const i32, offset: *const i64, region: i64) -> (isize, u32) {
    let b = block.index as usize;
    let (valid, offset) = unsafe { (valid.add(b).read(), offset.add(b).read()) };
    ((block.index as i64 * region + offset) as isize, valid.max(0) as u32)
}

/// Index in `init`/`dst`/`items` of the calling thread's first payload slot.
#[inline(always)]
pub(crate) fn payload_of<const IPT: usize>(block: Block) -> usize {
    (block.index as usize * block.threads as usize + block.rank as usize) * IPT
}

/// The Load kernel body: payload from `init`, block Load with algorithm `A`, payload to `dst`.
#[inline(always)]
pub unsafe fn load<T: Item, const IPT: usize, A: Algorithm>(
    src: *const T, init: *const T, dst: *mut T, valid: *const i32, offset: *const i64,
    has_oob: *const i32, oob: *const T, region: i64,
) {
    let block = Block::current();
    let slot = payload_of::<IPT>(block);
    unsafe {
        let mut items: [T; IPT] = core::array::from_fn(|i| init.add(slot + i).read());
        let (start, valid) = tile_of(block, valid, offset, region);
        let b = block.index as usize;
        let oob = if has_oob.add(b).read() != 0 { Some(oob.add(b).read()) } else { None };
        A::load(block, src.offset(start), &mut items, valid, oob);
        for (i, item) in items.iter().enumerate() {
            dst.add(slot + i).write(*item);
        }
    }
}

/// The Store kernel body: payload from `items`, block Store with algorithm `A` into `dst`.
#[inline(always)]
pub unsafe fn store<T: Item, const IPT: usize, A: Algorithm>(
    items: *const T, dst: *mut T, valid: *const i32, offset: *const i64, region: i64,
) {
    let block = Block::current();
    let slot = payload_of::<IPT>(block);
    unsafe {
        let payload: [T; IPT] = core::array::from_fn(|i| items.add(slot + i).read());
        let (start, valid) = tile_of(block, valid, offset, region);
        A::store(block, dst.offset(start), &payload, valid);
    }
}

/// Exports the Load and Store entries of every (dtype, items_per_thread, algorithm) listed.
macro_rules! export {
    (dtypes { $($dtype:ident: $t:ident),* } ipts $ipts:tt algorithms $algs:tt) => {
        $( export!(@dtype $dtype $t $ipts $algs); )*
    };
    (@dtype $dtype:ident $t:ident [$($ipt:literal)*] $algs:tt) => {
        $( export!(@ipt $dtype $t $ipt $algs); )*
    };
    (@ipt $dtype:ident $t:ident $ipt:literal [$($alg:ident: $A:ident),*]) => {
        $( export!(@one $dtype $t $ipt $alg $A); )*
    };
    (@one $dtype:ident $t:ident $ipt:literal $alg:ident $A:ident) => {
        // An anonymous scope per entry: the Rust names never clash, the exported names are unique.
        const _: () = {
            #[unsafe(export_name = concat!(
                "coop_block_load__", stringify!($dtype), "__ipt", stringify!($ipt), "__", stringify!($alg)
            ))]
            unsafe extern "ptx-kernel" fn load(
                src: *const $t, init: *const $t, dst: *mut $t, valid: *const i32, offset: *const i64,
                has_oob: *const i32, oob: *const $t, region: i64,
            ) {
                unsafe { $crate::kernels::load::<$t, $ipt, $A>(src, init, dst, valid, offset, has_oob, oob, region) }
            }

            #[unsafe(export_name = concat!(
                "coop_block_store__", stringify!($dtype), "__ipt", stringify!($ipt), "__", stringify!($alg)
            ))]
            unsafe extern "ptx-kernel" fn store(
                items: *const $t, dst: *mut $t, valid: *const i32, offset: *const i64, region: i64,
            ) {
                unsafe { $crate::kernels::store::<$t, $ipt, $A>(items, dst, valid, offset, region) }
            }
        };
    };
}

export! {
    dtypes {
        uint8: u8, int8: i8, int16: i16, uint16: u16, int32: i32, uint32: u32, int64: i64,
        uint64: u64, float16: u16, float32: f32, float64: f64
    }
    ipts [1 2 3 4 7 8 16]
    algorithms [
        direct: Direct, striped: Striped, vectorize: Vectorize, transpose: Transpose,
        warp_transpose: WarpTranspose
    ]
}
