//! Graph capture. While a thread captures, the pool records every buffer whose address it hands
//! to that thread (and every buffer it allocates) as used by the graph: the captured kernels hold
//! those addresses for the graph's life. Such a buffer is never spilled, and when it is released
//! its block is held for the graph instead of cached: nothing else gets that memory until every
//! graph using it is released. A block released during its own capture, used by that graph
//! alone, is the capture's private memory: later allocations of the same capture reuse it (the
//! captured work runs in stream order), nobody else does.
//!
//! During a capture the capturing thread's allocations look for memory without events (no
//! fences recorded or queried: a capturing stream forbids it), give no cached memory back and
//! spill nothing (both are synchronous); other threads are unaffected. When a graph is released
//! its blocks go back to the cache as freed on the stream it last ran on.

use std::sync::atomic::Ordering::Relaxed;

use super::cache::{Block, FreeLists};
use super::hash::HashMap;
use super::shard::shard_of;
use super::{lock, BufferId, Pool, PoolError, Stream};
use crate::capture;

pub type GraphId = u64;

/// A released buffer's block, held while graphs that used it live.
pub(crate) struct Held {
    pub block: Block,
    pub graphs: Vec<GraphId>,
}

#[derive(Default)]
pub(crate) struct GraphState {
    /// Every buffer the graph's work uses (each once).
    used: Vec<BufferId>,
    /// Blocks released during the capture that only this graph used.
    private: FreeLists,
    capturing: bool,
}

#[derive(Default)]
pub(crate) struct Graphs {
    states: HashMap<GraphId, GraphState>,
    held: HashMap<BufferId, Held>,
    next: GraphId,
}

impl Pool {
    /// Starts a capture by the calling thread (its work on `stream` is being recorded).
    pub fn begin_capture(&self, _stream: Stream) -> Result<GraphId, PoolError> {
        let me = self.threads.me();
        if me.capturing().is_some() {
            return Err(PoolError::Capture(
                "this thread is capturing a graph already (captures do not nest)".into(),
            ));
        }
        let graph = {
            let mut graphs = lock(&self.graphs);
            graphs.next += 1;
            let id = graphs.next;
            graphs.states.insert(
                id,
                GraphState {
                    capturing: true,
                    ..GraphState::default()
                },
            );
            id
        };
        if !me.begin_capture(graph) {
            lock(&self.graphs).states.remove(&graph);
            return Err(PoolError::Capture(
                "this thread cannot capture now (it is ending)".into(),
            ));
        }
        capture::enter();
        Ok(graph)
    }

    /// Ends the calling thread's capture; returns its graph, which holds its memory until
    /// `release_graph`.
    pub fn end_capture(&self) -> Result<GraphId, PoolError> {
        let Some(done) = self.threads.me().end_capture() else {
            return Err(PoolError::Capture("this thread is not capturing".into()));
        };
        capture::exit();
        let mut graphs = lock(&self.graphs);
        let state = graphs
            .states
            .get_mut(&done.graph)
            .expect("a capturing graph is not released");
        state.used = done.used;
        state.capturing = false;
        Ok(done.graph)
    }

    /// Whether the calling thread is capturing.
    pub fn capturing(&self) -> bool {
        self.threads.me().capturing().is_some()
    }

    /// Bytes of released buffers' blocks that `graph` holds (alone or with other graphs).
    pub fn graph_held_bytes(&self, graph: GraphId) -> Result<u64, PoolError> {
        let graphs = lock(&self.graphs);
        let state = graphs
            .states
            .get(&graph)
            .ok_or(PoolError::UnknownGraph(graph))?;
        let shared: u64 = graphs
            .held
            .values()
            .filter(|h| h.graphs.contains(&graph))
            .map(|h| h.block.size)
            .sum();
        Ok(state.private.bytes() + shared)
    }

    /// Forgets `graph` (its capture has ended): buffers it used may spill again, and blocks no
    /// other graph holds go back to the cache, as freed on `stream` (where it last ran).
    pub fn release_graph(&self, graph: GraphId, stream: Stream) -> Result<(), PoolError> {
        let state = {
            let mut graphs = lock(&self.graphs);
            match graphs.states.get(&graph) {
                None => return Err(PoolError::UnknownGraph(graph)),
                Some(s) if s.capturing => {
                    return Err(PoolError::Capture(
                        "a graph cannot be released while it is being captured".into(),
                    ))
                }
                Some(_) => graphs.states.remove(&graph).expect("checked above"),
            }
        };
        // Live buffers forget the graph under their shard's lock; a buffer not live there was
        // released, and `hold` put its block in `held` under that same lock.
        let mut released = Vec::new();
        for &id in &state.used {
            let live = self
                .shard_for(id)
                .update(id, |l| l.graphs.retain(|&g| g != graph));
            if live.is_none() {
                released.push(id);
            }
        }
        let mut back: Vec<(usize, Block)> = Vec::new();
        {
            let mut graphs = lock(&self.graphs);
            for id in released {
                let Some(held) = graphs.held.get_mut(&id) else {
                    continue; // a block of this capture's private memory (reused, or below)
                };
                held.graphs.retain(|&g| g != graph);
                if held.graphs.is_empty() {
                    let held = graphs.held.remove(&id).expect("found above");
                    back.push((shard_of(id), held.block));
                }
            }
        }
        let own = self.threads.me().shard();
        let mut private = state.private;
        while let Some(block) = private.take_any() {
            back.push((own, block));
        }
        let era = self.era();
        for (shard, block) in back {
            self.gauges.graph_held.fetch_sub(block.size, Relaxed);
            self.shard(shard).free.put(block, Some(stream), era);
        }
        Ok(())
    }

    /// Takes a released buffer's block that graphs use (called under the buffer's shard lock,
    /// so that `release_graph` sees it either live or held).
    pub(super) fn hold(&self, id: BufferId, block: Block, graphs_of: Vec<GraphId>) {
        let capturing = self.threads.me().capturing();
        self.gauges.graph_held.fetch_add(block.size, Relaxed);
        let mut graphs = lock(&self.graphs);
        if let ([only], Some(current)) = (graphs_of.as_slice(), capturing) {
            if *only == current {
                if let Some(state) = graphs.states.get_mut(&current) {
                    // Reusable by this capture's later allocations, by nothing else.
                    state.private.put(block, None, 0);
                    return;
                }
            }
        }
        graphs.held.insert(
            id,
            Held {
                block,
                graphs: graphs_of,
            },
        );
    }

    /// A block of class `size` from the capture's private memory.
    pub(super) fn take_private(&self, graph: GraphId, size: u64) -> Option<Block> {
        let mut graphs = lock(&self.graphs);
        let block = graphs.states.get_mut(&graph)?.private.take(size, 0)?;
        self.gauges.graph_held.fetch_sub(block.size, Relaxed);
        Some(block)
    }
}
