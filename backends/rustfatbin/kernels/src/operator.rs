//! The operators of the reducing families (`coopcheck.reduce`): sum, min, max, matmul and first, over
//! every dtype's arithmetic. Integers wrap; float min and max are fmin and fmax (a NaN operand is ignored
//! unless both are one), selecting an operand bit for bit; float16 is [`F16`], its bits with IEEE
//! half arithmetic (PTX's `.f16` instructions), so that it never passes for the `u16` of uint16. (A host build of
//! the operators, which the Scan kernel's host run uses, has no PTX: no F16.)

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

use crate::item::Item;

/// The arithmetic an operator needs of an item.
pub trait Operand: Item + PartialEq {
    /// The seen flag's values in the dtype (`coopcheck.reduce`: 1 where an operand equalled the sentinel).
    const ZERO: Self;
    const ONE: Self;
    /// `self + other`, wrapping for integers, rounded to nearest even for floats.
    fn plus(self, other: Self) -> Self;
    /// `self < other`: false where either is a NaN.
    fn less(self, other: Self) -> bool;
    fn is_nan(self) -> bool;
    /// Zero, -0.0 too (the operator first skips it).
    fn is_zero(self) -> bool;
}

/// An integer item read as a 2x2 matrix of `bits / 4`-bit entries, entry 0 the lowest.
pub trait Matrix: Operand {
    /// `self @ other` modulo `2**(bits / 4)`.
    fn times(self, other: Self) -> Self;
}

/// The product of two packed 2x2 matrices of `k`-bit entries, modulo `2**k`, in `u32` (entries of at most 8
/// bits: every sum of two products fits) or `u64` (16-bit entries).
macro_rules! packed_product {
    ($w:ty, $x:expr, $y:expr, $k:expr) => {{
        let (x, y, k): ($w, $w, u32) = ($x, $y, $k);
        let mask: $w = (1 << k) - 1;
        let e = |v: $w, j: u32| (v >> (j * k)) & mask;
        let entry = |r: u32, c: u32| (e(x, 2 * r) * e(y, c) + e(x, 2 * r + 1) * e(y, 2 + c)) & mask;
        entry(0, 0) | entry(0, 1) << k | entry(1, 0) << (2 * k) | entry(1, 1) << (3 * k)
    }};
}

macro_rules! integer {
    ($($t:ty: $u:ty, $w:ty);*) => {$(
        impl Operand for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            #[inline(always)]
            fn plus(self, other: Self) -> Self { self.wrapping_add(other) }
            #[inline(always)]
            fn less(self, other: Self) -> bool { self < other }
            #[inline(always)]
            fn is_nan(self) -> bool { false }
            #[inline(always)]
            fn is_zero(self) -> bool { self == 0 }
        }

        impl Matrix for $t {
            #[inline(always)]
            fn times(self, other: Self) -> Self {
                packed_product!($w, self as $u as $w, other as $u as $w, <$u>::BITS / 4) as $u as $t
            }
        }
    )*};
}

// Each integer dtype with its unsigned bits and the width its matrix product is computed in.
integer!(u8: u8, u32; i8: u8, u32; i16: u16, u32; u16: u16, u32; i32: u32, u32; u32: u32, u32; i64: u64, u64;
         u64: u64, u64);

macro_rules! float {
    ($($t:ty),*) => {$(
        impl Operand for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            #[inline(always)]
            fn plus(self, other: Self) -> Self { self + other }
            #[inline(always)]
            fn less(self, other: Self) -> bool { self < other }
            #[inline(always)]
            fn is_nan(self) -> bool { self != self }
            #[inline(always)]
            fn is_zero(self) -> bool { self == 0.0 }
        }
    )*};
}

float!(f32, f64);

/// An IEEE half: float16 items, as their bits.
#[cfg(target_arch = "nvptx64")]
#[derive(Clone, Copy, PartialEq)]
#[repr(transparent)]
pub struct F16(pub u16);

#[cfg(target_arch = "nvptx64")]
impl F16 {
    const MAGNITUDE: u16 = 0x7fff;
    const INFINITY: u16 = 0x7c00;

    /// The same value as an f32 (exact: every half is a float).
    #[inline(always)]
    fn widen(self) -> f32 {
        let wide: f32;
        // SAFETY: a register conversion; it reads and writes no memory.
        unsafe {
            asm!("cvt.f32.f16 {w}, {h};", w = out(reg32) wide, h = in(reg16) self.0,
                 options(pure, nomem, nostack, preserves_flags));
        }
        wide
    }
}

#[cfg(target_arch = "nvptx64")]
impl Item for F16 {
    #[inline(always)]
    unsafe fn store_shared(self, addr: u32) {
        unsafe { self.0.store_shared(addr) }
    }
    #[inline(always)]
    unsafe fn load_shared(addr: u32) -> Self {
        F16(unsafe { u16::load_shared(addr) })
    }
}

#[cfg(target_arch = "nvptx64")]
impl Operand for F16 {
    const ZERO: Self = F16(0);
    const ONE: Self = F16(0x3c00);
    #[inline(always)]
    fn plus(self, other: Self) -> Self {
        let sum: u16;
        // SAFETY: a register addition; it reads and writes no memory.
        unsafe {
            asm!("add.rn.f16 {s}, {a}, {b};", s = out(reg16) sum, a = in(reg16) self.0, b = in(reg16) other.0,
                 options(pure, nomem, nostack, preserves_flags));
        }
        F16(sum)
    }
    #[inline(always)]
    fn less(self, other: Self) -> bool {
        self.widen() < other.widen()
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        self.0 & Self::MAGNITUDE > Self::INFINITY
    }
    #[inline(always)]
    fn is_zero(self) -> bool {
        self.0 & Self::MAGNITUDE == 0
    }
}

/// What an operator may record: the block's sentinel (a value no valid item has) and whether the calling
/// thread ever applied its operator to an operand equal to it.
pub struct Record<T> {
    pub sentinel: T,
    pub seen: bool,
}

/// An associative operator of the family; only [`First`] records.
pub trait Operator<T: Operand> {
    fn apply(a: T, b: T, record: &mut Record<T>) -> T;
}

pub struct Sum;
pub struct Min;
pub struct Max;
pub struct Matmul;
pub struct First;

impl<T: Operand> Operator<T> for Sum {
    #[inline(always)]
    fn apply(a: T, b: T, _: &mut Record<T>) -> T {
        a.plus(b)
    }
}

impl<T: Operand> Operator<T> for Min {
    #[inline(always)]
    fn apply(a: T, b: T, _: &mut Record<T>) -> T {
        if a.is_nan() {
            b
        } else if b.is_nan() || a.less(b) {
            a
        } else {
            b
        }
    }
}

impl<T: Operand> Operator<T> for Max {
    #[inline(always)]
    fn apply(a: T, b: T, _: &mut Record<T>) -> T {
        if a.is_nan() {
            b
        } else if b.is_nan() || !a.less(b) {
            a
        } else {
            b
        }
    }
}

impl<T: Matrix> Operator<T> for Matmul {
    #[inline(always)]
    fn apply(a: T, b: T, _: &mut Record<T>) -> T {
        a.times(b)
    }
}

impl<T: Operand> Operator<T> for First {
    #[inline(always)]
    fn apply(a: T, b: T, record: &mut Record<T>) -> T {
        if a == record.sentinel || b == record.sentinel {
            record.seen = true;
        }
        if a.is_zero() { b } else { a }
    }
}
