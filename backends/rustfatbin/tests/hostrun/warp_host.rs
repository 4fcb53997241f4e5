//! The crate's Warp Reduce and Warp Scan kernel bodies (`kernels/src/warp_reduce.rs`, `warp_scan.rs`, with their
//! logical warps and operators) run on the host, for the host tests: one OS thread per GPU thread of a block, and
//! every shuffle and vote an exchange of the block's threads between two barriers (the kernels' exchanges are
//! uniform: every thread of a block makes the same ones). An exchange whose member mask is not exactly the lanes
//! the caller's hardware warp has ends the run with a message and status 3; a source lane outside the mask reads a
//! poison value (the hardware's value is undefined), so a result built from one shows.
//!
//! Usage: `warp_host ENTRY THREADS N_BLOCKS ARG...`: ENTRY is a kernel name of the crate that the test generated a
//! dispatch for (`points.rs`, included at compile time from `$COOP_WARP_POINTS`); each ARG is a kernel parameter in
//! ABI order: `in:FILE` (the batch's raw bytes), `out:FILE` (the output, read (its filler) and written back) or an
//! integer (a by-value parameter).
#![allow(dead_code)]

#[path = "../../kernels/src/block.rs"]
mod block;
#[path = "../../kernels/src/operator.rs"]
mod operator;
#[path = "../../kernels/src/warp.rs"]
mod warp;
#[path = "../../kernels/src/warp_reduce.rs"]
mod warp_reduce;
#[path = "../../kernels/src/warp_scan.rs"]
mod warp_scan;

use std::sync::{Arc, Barrier};

use operator::{Operand, Operator};

#[path = "gpu_thread.rs"]
mod gpu_thread;

use gpu_thread::words;

/// Items' moves through shared memory, as `kernels/src/item.rs` has them (the warp kernels make none).
mod item {
    pub trait Item: Copy {}
    impl<T: Copy> Item for T {}
}

/// The shuffles and votes, as `kernels/src/shfl.rs` has them, through [`crate::sim`].
mod shfl {
    pub unsafe fn converged_lanes() -> u32 {
        crate::sim::existing_lanes()
    }

    pub unsafe fn ballot(mask: u32, predicate: bool) -> u32 {
        crate::sim::vote(mask, predicate)
    }

    pub trait Shfl: Copy {
        unsafe fn shfl(self, source: u32, mask: u32) -> Self;
    }

    macro_rules! shfl {
        ($($t:ty),*) => {$(
            impl Shfl for $t {
                unsafe fn shfl(self, source: u32, mask: u32) -> Self {
                    let mut bytes = [0u8; 8];
                    bytes[..size_of::<$t>()].copy_from_slice(&self.to_le_bytes());
                    let got = crate::sim::exchange(mask, u64::from_le_bytes(bytes), source).to_le_bytes();
                    <$t>::from_le_bytes(got[..size_of::<$t>()].try_into().unwrap())
                }
            }
        )*};
    }

    shfl!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);
}

/// One block's exchange slots and barrier.
mod sim {
    use std::cell::RefCell;
    use std::sync::{Arc, Barrier, Mutex};

    /// What a source lane outside the mask reads.
    const POISON: u64 = 0xa5a5_a5a5_a5a5_a5a5;

    /// Each thread's value and member mask of the current exchange.
    pub static SLOTS: Mutex<Vec<(u64, u32)>> = Mutex::new(Vec::new());

    thread_local! {
        static BARRIER: RefCell<Option<Arc<Barrier>>> = const { RefCell::new(None) };
    }

    pub fn start_block(threads: u32) {
        *SLOTS.lock().unwrap() = vec![(0, 0); threads as usize];
    }

    pub fn start_thread(barrier: Arc<Barrier>) {
        BARRIER.with(|b| *b.borrow_mut() = Some(barrier));
    }

    fn barrier() {
        BARRIER.with(|b| b.borrow().as_ref().expect("a block barrier").wait());
    }

    fn fail(what: String) -> ! {
        let me = crate::block::Block::current();
        eprintln!("thread {} of block {}: {what}", me.rank, me.index);
        std::process::exit(3);
    }

    /// The lanes the calling thread's hardware warp has.
    pub fn existing_lanes() -> u32 {
        let me = crate::block::Block::current();
        let existing = (me.threads - me.rank / 32 * 32).min(32);
        if existing == 32 { u32::MAX } else { (1 << existing) - 1 }
    }

    /// Stores the calling thread's `value` for an exchange of `mask`, then after a barrier gives `take` every slot
    /// of its hardware warp; a last barrier frees the slots. Every thread of the block calls it together.
    fn exchange_with<R>(mask: u32, value: u64, take: impl FnOnce(&[(u64, u32)]) -> R) -> R {
        let me = crate::block::Block::current();
        if mask != existing_lanes() {
            fail(format!("member mask {mask:#010x}, but the hardware warp has lanes {:#010x}", existing_lanes()));
        }
        SLOTS.lock().unwrap()[me.rank as usize] = (value, mask);
        barrier();
        let got = {
            let slots = SLOTS.lock().unwrap();
            let first = (me.rank / 32 * 32) as usize;
            take(&slots[first..(first + 32).min(slots.len())])
        };
        barrier();
        got
    }

    /// Lane `source`'s `value` in the calling thread's hardware warp (`shfl.sync.idx`).
    pub fn exchange(mask: u32, value: u64, source: u32) -> u64 {
        exchange_with(mask, value, |warp| {
            if source >= 32 || mask >> source & 1 == 0 {
                return POISON;
            }
            let (got, theirs) = warp[source as usize];
            if theirs != mask {
                fail(format!("lane {source} exchanged with mask {theirs:#010x}, this one with {mask:#010x}"));
            }
            got
        })
    }

    /// The lanes of `mask` whose `predicate` holds (`vote.ballot.sync`).
    pub fn vote(mask: u32, predicate: bool) -> u32 {
        exchange_with(mask, predicate as u64, |warp| {
            warp.iter().enumerate().filter(|(lane, (p, _))| mask >> lane & 1 == 1 && *p != 0)
                .fold(0, |bits, (lane, _)| bits | 1 << lane)
        })
    }
}

/// A parameter of the launch the command line describes.
enum Arg {
    In(Vec<u64>),
    Out(String, Vec<u64>, usize),
    Value(i64),
}

impl Arg {
    fn parse(text: &str) -> Self {
        if let Some(path) = text.strip_prefix("in:") {
            Arg::In(words(path).0)
        } else if let Some(path) = text.strip_prefix("out:") {
            let (words, len) = words(path);
            Arg::Out(path.to_string(), words, len)
        } else {
            Arg::Value(text.parse().unwrap_or_else(|e| panic!("{text}: {e}")))
        }
    }

    /// The address a kernel reads (in) or writes (out) through, or the value, as a `usize` a thread may take.
    fn address(&mut self) -> usize {
        match self {
            Arg::In(words) => words.as_ptr() as usize,
            Arg::Out(_, words, _) => words.as_mut_ptr() as usize,
            Arg::Value(value) => *value as usize,
        }
    }
}

/// Every block of the launch, one after the other, each thread on its own host thread running `kernel` with the
/// parameters' addresses and values.
fn launch(threads: u32, blocks: u32, args: &mut [Arg], kernel: impl Fn(&[usize]) + Sync) {
    let params: Vec<usize> = args.iter_mut().map(Arg::address).collect();
    for index in 0..blocks {
        sim::start_block(threads);
        let barrier = Arc::new(Barrier::new(threads as usize));
        std::thread::scope(|scope| {
            for rank in 0..threads {
                let (barrier, params, kernel) = (barrier.clone(), &params, &kernel);
                std::thread::Builder::new().stack_size(1 << 18).spawn_scoped(scope, move || {
                    gpu_thread::enter(block::Block { rank, threads, index });
                    sim::start_thread(barrier);
                    kernel(params);
                }).expect("a host thread");
            }
        });
    }
    for arg in args {
        if let Arg::Out(path, words, len) = arg {
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).take(*len).collect();
            std::fs::write(path, bytes).expect("the output file");
        }
    }
}

/// A Warp Reduce entry's launch: `(items, flags, valid, sentinel, dst, width, mode)`.
fn run_reduce<T: Operand + shfl::Shfl, O: Operator<T>>(threads: u32, blocks: u32, args: &mut [Arg]) {
    launch(threads, blocks, args, |p| unsafe {
        warp_reduce::warp_reduce_kernel::<T, O>(p[0] as *const T, p[1] as *const u8, p[2] as *const i32,
                                                p[3] as *const T, p[4] as *mut T, p[5] as i64, p[6] as i64)
    });
}

/// A Warp Scan entry's launch: `(items, initial, dst, width, mode, seed, aggregate)`.
fn run_scan<T: Operand + shfl::Shfl, O: Operator<T>>(threads: u32, blocks: u32, args: &mut [Arg]) {
    launch(threads, blocks, args, |p| unsafe {
        warp_scan::warp_scan_kernel::<T, O>(p[0] as *const T, p[1] as *const T, p[2] as *mut T, p[3] as i64,
                                            p[4] as i64, p[5] as i64, p[6] as i64)
    });
}

include!(env!("COOP_WARP_POINTS"));

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, entry, threads, blocks, params @ ..] = &args[..] else {
        eprintln!("usage: warp_host ENTRY THREADS N_BLOCKS ARG...");
        std::process::exit(2);
    };
    let number = |text: &str| text.parse::<u32>().unwrap_or_else(|e| panic!("{text}: {e}"));
    let mut params: Vec<Arg> = params.iter().map(|p| Arg::parse(p)).collect();
    if !dispatch(entry, number(threads), number(blocks), &mut params) {
        eprintln!("{entry}: no dispatch for it in this build");
        std::process::exit(2);
    }
}
