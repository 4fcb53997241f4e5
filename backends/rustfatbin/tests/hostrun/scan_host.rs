//! The crate's Scan kernel body (`kernels/src/scan.rs`, with its operators, raking grid and block) run on the host,
//! for the host tests: one OS thread per GPU thread of a block, the block barrier a `std::sync::Barrier`, and the dynamic
//! shared scratch a byte array whose every access is checked against the barriers. A byte written by one thread
//! and read or written by another between the same two barriers is a race, a byte read before any write is
//! uninitialized, one past the launch's scratch is out of bounds: each ends the run with a message and status 3.
//!
//! Usage: `scan_host ENTRY THREADS N_BLOCKS MODE SEED SHARED_BYTES ITEMS INITIAL DST`: ENTRY is a kernel name of
//! the crate that the test generated a dispatch for (`points.rs`, included at compile time from `$COOP_SCAN_POINTS`),
//! MODE and SEED the codes the adapter passes, ITEMS and INITIAL files of the batch's raw bytes, DST the file of the
//! output, read (its filler) and written back.
#![allow(dead_code, unused_imports)]

#[path = "../../kernels/src/operator.rs"]
mod operator;
#[path = "../../kernels/src/reduce.rs"]
mod reduce;
#[path = "../../kernels/src/scan.rs"]
mod scan;

use std::sync::{Arc, Barrier};

use operator::{Operand, Operator};

#[path = "../../kernels/src/block.rs"]
mod block;

#[path = "gpu_thread.rs"]
mod gpu_thread;

use gpu_thread::words;

/// The scratch, the block barrier and the optimizer's blind spot, as `kernels/src/shared.rs` has them.
mod shared {
    pub fn scratch() -> u32 {
        0
    }

    pub unsafe fn sync_block() {
        crate::sim::barrier();
    }

    pub fn unthreaded(flag: bool) -> bool {
        core::hint::black_box(flag)
    }
}

/// Items' moves through the scratch, as `kernels/src/item.rs` has them.
mod item {
    pub trait Item: Copy {
        unsafe fn store_shared(self, addr: u32);
        unsafe fn load_shared(addr: u32) -> Self;
    }

    macro_rules! item {
        ($($t:ty),*) => {$(
            impl Item for $t {
                unsafe fn store_shared(self, addr: u32) {
                    crate::sim::store(addr, &self.to_le_bytes());
                }
                unsafe fn load_shared(addr: u32) -> Self {
                    let mut bytes = [0u8; size_of::<$t>()];
                    crate::sim::load(addr, &mut bytes);
                    <$t>::from_le_bytes(bytes)
                }
            }
        )*};
    }

    item!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);
}

/// One block's checked scratch and barrier.
mod sim {
    use std::cell::{Cell, RefCell};
    use std::sync::{Arc, Barrier, Mutex};

    /// Who last wrote and read a byte, and between which barriers (epoch + 1; 0: never).
    #[derive(Clone, Copy, Default)]
    struct Shadow {
        writer: u32,
        written: u64,
        reader: u32,
        read: u64,
        readers: bool, // more than one thread read it in epoch `read`
    }

    pub struct Scratch {
        bytes: Vec<u8>,
        shadow: Vec<Shadow>,
    }

    pub static SCRATCH: Mutex<Option<Scratch>> = Mutex::new(None);

    thread_local! {
        static EPOCH: Cell<u64> = const { Cell::new(0) };
        static BARRIER: RefCell<Option<Arc<Barrier>>> = const { RefCell::new(None) };
    }

    pub fn start_block(bytes: usize) {
        *SCRATCH.lock().unwrap() = Some(Scratch { bytes: vec![0; bytes], shadow: vec![Shadow::default(); bytes] });
    }

    pub fn start_thread(barrier: Arc<Barrier>) {
        EPOCH.with(|e| e.set(0));
        BARRIER.with(|b| *b.borrow_mut() = Some(barrier));
    }

    pub fn barrier() {
        BARRIER.with(|b| b.borrow().as_ref().expect("a block barrier").wait());
        EPOCH.with(|e| e.set(e.get() + 1));
    }

    fn fail(what: &str, addr: usize, other: u32) -> ! {
        let me = crate::block::Block::current();
        eprintln!("scratch byte {addr}: {what} (thread {}, thread {other}, block {}, after {} barriers)", me.rank,
                  me.index, EPOCH.with(|e| e.get()));
        std::process::exit(3);
    }

    fn access(addr: u32, len: usize, mut each: impl FnMut(usize, &mut Shadow, &mut u8, u32, u64)) {
        let (me, epoch) = (crate::block::Block::current().rank, EPOCH.with(|e| e.get()) + 1);
        let mut guard = SCRATCH.lock().unwrap();
        let scratch = guard.as_mut().expect("a started block");
        for a in addr as usize..addr as usize + len {
            if a >= scratch.bytes.len() {
                fail(&format!("out of bounds of the launch's {} bytes", scratch.bytes.len()), a, me);
            }
            each(a, &mut scratch.shadow[a], &mut scratch.bytes[a], me, epoch);
        }
    }

    pub fn store(addr: u32, value: &[u8]) {
        let mut i = 0;
        access(addr, value.len(), |a, s, byte, me, epoch| {
            if s.written == epoch && s.writer != me {
                fail("written by two threads between two barriers", a, s.writer);
            }
            if s.read == epoch && (s.readers || s.reader != me) {
                fail("written after another thread read it, between two barriers", a, s.reader);
            }
            (s.writer, s.written, *byte) = (me, epoch, value[i]);
            i += 1;
        });
    }

    pub fn load(addr: u32, value: &mut [u8]) {
        let mut i = 0;
        access(addr, value.len(), |a, s, byte, me, epoch| {
            if s.written == 0 {
                fail("read before any write", a, me);
            }
            if s.written == epoch && s.writer != me {
                fail("read after another thread wrote it, between two barriers", a, s.writer);
            }
            if s.read == epoch {
                s.readers |= s.reader != me;
            } else {
                (s.reader, s.read, s.readers) = (me, epoch, false);
            }
            value[i] = *byte;
            i += 1;
        });
    }
}

/// The launch the command line describes.
struct Launch {
    threads: u32,
    blocks: u32,
    mode: i64,
    seed: i64,
    shared_bytes: usize,
    items: String,
    initial: String,
    dst: String,
}

/// Every block of the launch, one after the other, each thread on its own host thread.
fn run<T: Operand + Send, O: Operator<T>, A: scan::Algorithm, const IPT: usize>(launch: &Launch) {
    let (items, _) = words(&launch.items);
    let (initial, _) = words(&launch.initial);
    let (mut dst, dst_len) = words(&launch.dst);
    let (items_at, initial_at, dst_at) = (items.as_ptr() as usize, initial.as_ptr() as usize,
                                          dst.as_mut_ptr() as usize);
    for index in 0..launch.blocks {
        sim::start_block(launch.shared_bytes);
        let barrier = Arc::new(Barrier::new(launch.threads as usize));
        std::thread::scope(|scope| {
            for rank in 0..launch.threads {
                let (barrier, threads, mode, seed) = (barrier.clone(), launch.threads, launch.mode, launch.seed);
                std::thread::Builder::new().stack_size(1 << 18).spawn_scoped(scope, move || {
                    gpu_thread::enter(block::Block { rank, threads, index });
                    sim::start_thread(barrier);
                    // SAFETY: the buffers outlive the scope; each thread writes only its own slots of dst.
                    unsafe {
                        scan::scan_kernel::<T, O, A, IPT>(items_at as *const T, initial_at as *const T,
                                                          dst_at as *mut T, mode, seed)
                    }
                }).expect("a host thread");
            }
        });
    }
    let bytes: Vec<u8> = dst.iter().flat_map(|w| w.to_le_bytes()).take(dst_len).collect();
    std::fs::write(&launch.dst, bytes).expect("the output file");
}

include!(env!("COOP_SCAN_POINTS"));

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, entry, threads, blocks, mode, seed, shared_bytes, items, initial, dst] = &args[..] else {
        eprintln!("usage: scan_host ENTRY THREADS N_BLOCKS MODE SEED SHARED_BYTES ITEMS INITIAL DST");
        std::process::exit(2);
    };
    let number = |text: &str| text.parse::<i64>().unwrap_or_else(|e| panic!("{text}: {e}"));
    let launch = Launch {
        threads: number(threads) as u32, blocks: number(blocks) as u32, mode: number(mode), seed: number(seed),
        shared_bytes: number(shared_bytes) as usize, items: items.clone(), initial: initial.clone(),
        dst: dst.clone(),
    };
    if !dispatch(entry, &launch) {
        eprintln!("{entry}: no dispatch for it in this build");
        std::process::exit(2);
    }
}
