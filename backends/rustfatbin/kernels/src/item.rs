//! Payload element types and their moves through shared memory (inline PTX, since plain rustc
//! has no `.shared` address space). Items are bit containers: float16 travels as its `u16` bits.

use core::arch::asm;

pub trait Item: Copy {
    /// Writes `self` at byte address `addr` of the block's shared window.
    unsafe fn store_shared(self, addr: u32);
    /// Reads the item at byte address `addr` of the block's shared window.
    unsafe fn load_shared(addr: u32) -> Self;
}

// The asm blocks are deliberately not `pure`: they must stay ordered with the block barriers.
macro_rules! item {
    ($($t:ty => $class:ident $ptx:literal;)*) => {$(
        impl Item for $t {
            #[inline(always)]
            unsafe fn store_shared(self, addr: u32) {
                unsafe {
                    asm!(concat!("st.shared.", $ptx, " [{a}], {v};"), a = in(reg32) addr,
                         v = in($class) self, options(nostack, preserves_flags));
                }
            }
            #[inline(always)]
            unsafe fn load_shared(addr: u32) -> Self {
                let v: $t;
                unsafe {
                    asm!(concat!("ld.shared.", $ptx, " {v}, [{a}];"), a = in(reg32) addr,
                         v = out($class) v, options(nostack, preserves_flags));
                }
                v
            }
        }
    )*};
}

item! {
    u16 => reg16 "b16"; i16 => reg16 "b16";
    u32 => reg32 "b32"; i32 => reg32 "b32"; f32 => reg32 "b32";
    u64 => reg64 "b64"; i64 => reg64 "b64"; f64 => reg64 "b64";
}

// PTX has no 8-bit registers: bytes move through the low half of a 16-bit one.
macro_rules! byte_item {
    ($($t:ty),*) => {$(
        impl Item for $t {
            #[inline(always)]
            unsafe fn store_shared(self, addr: u32) {
                unsafe {
                    asm!("st.shared.u8 [{a}], {v};", a = in(reg32) addr, v = in(reg16) self as u8 as u16,
                         options(nostack, preserves_flags));
                }
            }
            #[inline(always)]
            unsafe fn load_shared(addr: u32) -> Self {
                let v: u16;
                unsafe {
                    asm!("ld.shared.u8 {v}, [{a}];", a = in(reg32) addr, v = out(reg16) v,
                         options(nostack, preserves_flags));
                }
                v as u8 as $t
            }
        }
    )*};
}

byte_item!(u8, i8);
