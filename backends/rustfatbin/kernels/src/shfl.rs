//! Exchanges between the lanes of a hardware warp: `shfl.sync.idx` and `vote.ballot.sync` through their LLVM
//! intrinsics, which are `convergent`, so LLVM never moves them into divergent branches. Items of 8 and 16 bits
//! travel widened to 32, those of 64 bits as two halves.

use crate::operator::F16;

unsafe extern "C" {
    #[link_name = "llvm.nvvm.activemask"]
    fn activemask() -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.idx.i32"]
    fn shfl_sync_idx(mask: u32, value: u32, source: u32, clamp: u32) -> u32;
    #[link_name = "llvm.nvvm.vote.ballot.sync"]
    fn vote_ballot_sync(mask: u32, predicate: bool) -> u32;
}

/// The clamp operand of `shfl.sync.idx` for a whole hardware warp (no segmentation: sources are hardware lanes).
const WHOLE_WARP: u32 = 0x1f;

/// An item that one lane can read from another.
pub trait Shfl: Copy {
    /// Lane `source`'s `self`; every lane that `mask` names calls it together, and `mask` names only lanes that
    /// exist. A `source` outside `mask` gives an undefined value.
    unsafe fn shfl(self, source: u32, mask: u32) -> Self;
}

/// The lanes of the calling hardware warp that execute this call. Called where every thread of the block runs
/// (before any branch), it names the lanes the hardware warp has: the member mask of its exchanges. ptxas takes a
/// shuffle of this mask as converged, where one of a mask computed from the rank (the same lanes) gets a CALL to a
/// subroutine for the divergent case at sm_80, which the contract forbids.
#[inline(always)]
pub unsafe fn converged_lanes() -> u32 {
    unsafe { activemask() }
}

/// The lanes of `mask` whose `predicate` holds, as a mask of hardware lanes; every lane of `mask` calls it together.
#[inline(always)]
pub unsafe fn ballot(mask: u32, predicate: bool) -> u32 {
    unsafe { vote_ballot_sync(mask, predicate) }
}

macro_rules! word {
    ($($t:ty),*) => {$(
        impl Shfl for $t {
            #[inline(always)]
            unsafe fn shfl(self, source: u32, mask: u32) -> Self {
                unsafe { shfl_sync_idx(mask, self as u32, source, WHOLE_WARP) as $t }
            }
        }
    )*};
}

word!(u8, i8, u16, i16, u32, i32);

macro_rules! wide {
    ($($t:ty: $bits:ty => $from:expr, $to:expr);*) => {$(
        impl Shfl for $t {
            #[inline(always)]
            unsafe fn shfl(self, source: u32, mask: u32) -> Self {
                let bits = ($to)(self);
                let low = unsafe { shfl_sync_idx(mask, bits as u32, source, WHOLE_WARP) };
                let high = unsafe { shfl_sync_idx(mask, (bits >> 32) as u32, source, WHOLE_WARP) };
                ($from)((high as $bits) << 32 | low as $bits)
            }
        }
    )*};
}

wide!(u64: u64 => |b| b, |v| v; i64: u64 => |b: u64| b as i64, |v: i64| v as u64;
      f64: u64 => f64::from_bits, f64::to_bits);

impl Shfl for f32 {
    #[inline(always)]
    unsafe fn shfl(self, source: u32, mask: u32) -> Self {
        f32::from_bits(unsafe { self.to_bits().shfl(source, mask) })
    }
}

impl Shfl for F16 {
    #[inline(always)]
    unsafe fn shfl(self, source: u32, mask: u32) -> Self {
        F16(unsafe { self.0.shfl(source, mask) })
    }
}
