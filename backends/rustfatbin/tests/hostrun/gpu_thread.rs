//! What every host run of a kernel body shares: the calling GPU thread behind `Block::current`, set per host thread,
//! and the batch files read as words.

thread_local! {
    /// The calling GPU thread (rank, block size and index), set per host thread.
    static CURRENT: std::cell::Cell<Option<crate::block::Block>> = const { std::cell::Cell::new(None) };
}

impl crate::block::Block {
    pub fn current() -> Self {
        CURRENT.with(|c| c.get()).expect("a thread of a simulated block")
    }
}

/// Makes the calling host thread GPU thread `block`.
pub fn enter(block: crate::block::Block) {
    CURRENT.with(|c| c.set(Some(block)));
}

/// A file's bytes in 8-byte words, so that any item type reads them aligned.
pub fn words(path: &str) -> (Vec<u64>, usize) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut words = vec![0u64; bytes.len().div_ceil(8)];
    for (i, b) in bytes.iter().enumerate() {
        words[i / 8] |= (*b as u64) << (8 * (i % 8));
    }
    (words, bytes.len())
}
