//! Cached (freed) device blocks of one shard, by stream and size class, and the segments that
//! small blocks are carved from.
//!
//! A block freed on stream S waits in S's lists: reusable at once for work on S. It moves to the
//! `anywhere` lists (reusable on every stream) once a fence recorded on S after its free has
//! completed (`fences`); fresh slots of a new segment start there, since no work touched them.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::hash::HashMap;
use super::{Stream, SMALL_LIMIT};
use crate::size_class::round_up;

/// A backend allocation carved into equal slots of one small class (a slab). It can go back
/// when all its slots are cached (counted by `backend::release_cached`, which sees every shard).
pub(crate) struct Segment {
    pub base: u64,
    pub size: u64,
    pub slots: u64,
}

impl Segment {
    pub fn new(base: u64, size: u64, slot: u64) -> Self {
        Self {
            base,
            size,
            slots: size / slot,
        }
    }
}

/// Device memory of one size class: a whole backend allocation, or a slot of a segment.
pub(crate) struct Block {
    pub ptr: u64,
    pub size: u64,
    pub segment: Option<Arc<Segment>>,
}

pub(crate) struct FreeBlock {
    pub block: Block,
    /// The shard's count of blocks put back before this one: fences cover those below a cut.
    seq: u64,
    /// The pool's era at the free: the oldest cached memory goes back to the backend first.
    pub freed_at: u64,
}

/// Blocks by size class. Emptied lists stay (there are a few hundred classes at most), so that
/// a block going back and forth between the cache and a buffer costs no allocation.
#[derive(Default)]
struct Classes {
    lists: BTreeMap<u64, Vec<FreeBlock>>,
    count: usize,
}

impl Classes {
    /// The smallest class in `lo..=hi` with a block.
    fn first(&self, lo: u64, hi: u64) -> Option<u64> {
        if self.count == 0 || lo > hi {
            return None;
        }
        self.lists
            .range(lo..=hi)
            .find(|(_, blocks)| !blocks.is_empty())
            .map(|(&class, _)| class)
    }

    fn pop(&mut self, class: u64) -> Option<FreeBlock> {
        // The most recently freed: warm in caches, and LIFO keeps it so.
        let found = self.lists.get_mut(&class)?.pop()?;
        self.count -= 1;
        Some(found)
    }

    fn push(&mut self, free: FreeBlock) {
        self.lists.entry(free.block.size).or_default().push(free);
        self.count += 1;
    }

    fn blocks(&self) -> impl Iterator<Item = &FreeBlock> {
        self.lists.values().flatten()
    }
}

#[derive(Default)]
pub(crate) struct FreeLists {
    on_stream: HashMap<Stream, Classes>,
    anywhere: Classes,
    seq: u64,
    bytes: u64,
}

impl FreeLists {
    /// Caches a block freed on `stream` (None: untouched, reusable anywhere).
    pub fn put(&mut self, block: Block, stream: Option<Stream>, era: u64) {
        self.bytes += block.size;
        let free = FreeBlock {
            block,
            seq: self.seq,
            freed_at: era,
        };
        self.seq += 1;
        match stream {
            Some(s) => self.on_stream.entry(s).or_default().push(free),
            None => self.anywhere.push(free),
        }
    }

    /// A block for class `size` usable on `stream` now: of that class, or for a large one the
    /// class above (at most a quarter more), from the stream's own lists first.
    pub fn take(&mut self, size: u64, stream: Stream) -> Option<Block> {
        let upper = if size <= SMALL_LIMIT {
            size
        } else {
            round_up(size + 1)
        };
        let mut found = None;
        for (lo, hi) in [(size, size), (size + 1, upper)] {
            if let Some(own) = self.on_stream.get_mut(&stream) {
                if let Some(class) = own.first(lo, hi) {
                    found = own.pop(class);
                    break;
                }
            }
            if let Some(class) = self.anywhere.first(lo, hi) {
                found = self.anywhere.pop(class);
                break;
            }
        }
        let block = found?.block;
        self.bytes -= block.size;
        Some(block)
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Takes out some block, any class or stream (None when empty).
    pub fn take_any(&mut self) -> Option<Block> {
        for classes in self
            .on_stream
            .values_mut()
            .chain(std::iter::once(&mut self.anywhere))
        {
            if let Some(class) = classes.first(0, u64::MAX) {
                let block = classes.pop(class).expect("a non-empty class").block;
                self.bytes -= block.size;
                return Some(block);
            }
        }
        None
    }

    /// The count a fence recorded now covers: blocks put before it.
    pub fn cut(&self) -> u64 {
        self.seq
    }

    /// Streams other than `except` with blocks waiting for a fence.
    pub fn waiting_streams(&self, except: Stream) -> impl Iterator<Item = Stream> + '_ {
        self.on_stream
            .iter()
            .filter(move |(&s, classes)| s != except && classes.count > 0)
            .map(|(&s, _)| s)
    }

    /// Makes the blocks freed on `stream` before `cut` reusable anywhere (their fence
    /// completed); returns how many.
    pub fn release_fenced(&mut self, stream: Stream, cut: u64) -> usize {
        let Some(classes) = self.on_stream.get_mut(&stream) else {
            return 0;
        };
        let mut moved = 0;
        for (&class, blocks) in classes.lists.iter_mut() {
            let (done, waiting): (Vec<FreeBlock>, Vec<FreeBlock>) =
                blocks.drain(..).partition(|b| b.seq < cut);
            *blocks = waiting;
            if done.is_empty() {
                continue;
            }
            moved += done.len();
            self.anywhere.count += done.len();
            let dst = self.anywhere.lists.entry(class).or_default();
            dst.extend(done);
            // Oldest first, so that `pop` keeps taking the most recently freed.
            dst.sort_by_key(|b| b.seq);
        }
        classes.count -= moved;
        moved
    }

    pub fn iter(&self) -> impl Iterator<Item = &FreeBlock> {
        self.on_stream
            .values()
            .chain(std::iter::once(&self.anywhere))
            .flat_map(|classes| classes.blocks())
    }

    /// Takes out every block for which `give_back` holds (they go back to the backend).
    pub fn remove_where(&mut self, give_back: impl Fn(&Block) -> bool) {
        let mut removed = 0;
        for classes in self
            .on_stream
            .values_mut()
            .chain(std::iter::once(&mut self.anywhere))
        {
            let mut count = 0;
            for blocks in classes.lists.values_mut() {
                blocks.retain(|b| {
                    let out = give_back(&b.block);
                    if out {
                        removed += b.block.size;
                        count += 1;
                    }
                    !out
                });
            }
            classes.count -= count;
        }
        self.bytes -= removed;
    }
}
