//! What a pool knows of each thread that uses it: the shard it allocates in, a range of buffer
//! ids it hands out without touching shared state, and its pins.
//!
//! A thread's last `device_ptrs` call (or allocation) pins those buffers until its next one:
//! their addresses are about to be used by a launch, so no other thread may spill them in
//! between. Each thread writes only its own pin list; a thread looking for a spill victim reads
//! the others'. Lock order: a shard, then the registry, then a pin list.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex, Weak};

use super::graphs::GraphId;
use super::hash::HashSet;
use super::shard::{SHARDS, SHARD_BITS};
use super::{lock, BufferId};

/// Ids a thread takes from the pool's counter at a time.
const ID_CHUNK: u64 = 1024;

type PinList = Mutex<Vec<BufferId>>;
type Registry = Mutex<Vec<Arc<PinList>>>;

static NEXT_POOL: AtomicU64 = AtomicU64::new(1);

pub(crate) struct Threads {
    pool: u64,
    registry: Arc<Registry>,
    next_shard: AtomicUsize,
    next_ids: AtomicU64,
}

/// One thread's context in one pool.
struct Context {
    pool: u64,
    shard: usize,
    pins: Arc<PinList>,
    /// Ids [next, end) are this thread's to hand out.
    ids: Cell<(u64, u64)>,
    registry: Weak<Registry>,
    /// The graph this thread is capturing, if any.
    capture: RefCell<Option<Capture>>,
}

/// A capture in progress on one thread: its graph and the buffers handed to it so far (each
/// once), kept here so that noting one needs no lock.
pub(crate) struct Capture {
    pub graph: GraphId,
    pub used: Vec<BufferId>,
}

impl Drop for Context {
    fn drop(&mut self) {
        // The thread ends (or the pool went): its pins stop counting.
        if let Some(registry) = self.registry.upgrade() {
            lock(&registry).retain(|p| !Arc::ptr_eq(p, &self.pins));
        }
    }
}

thread_local! {
    static CONTEXTS: RefCell<Vec<Rc<Context>>> = const { RefCell::new(Vec::new()) };
}

impl Threads {
    pub fn new() -> Self {
        Self {
            pool: NEXT_POOL.fetch_add(1, Relaxed),
            registry: Arc::default(),
            next_shard: AtomicUsize::new(0),
            next_ids: AtomicU64::new(1),
        }
    }

    /// The calling thread as this pool knows it (looked up once per pool call).
    pub fn me(&self) -> Me<'_> {
        Me {
            threads: self,
            context: self.context(),
        }
    }

    /// The calling thread's context; None while the thread is being torn down.
    fn context(&self) -> Option<Rc<Context>> {
        CONTEXTS
            .try_with(|all| {
                if let Some(c) = all.borrow().iter().find(|c| c.pool == self.pool) {
                    return c.clone();
                }
                let pins: Arc<PinList> = Arc::default();
                lock(&self.registry).push(pins.clone());
                let c = Rc::new(Context {
                    pool: self.pool,
                    shard: self.next_shard.fetch_add(1, Relaxed) % SHARDS,
                    pins,
                    ids: Cell::new((0, 0)),
                    registry: Arc::downgrade(&self.registry),
                    capture: RefCell::new(None),
                });
                let mut all = all.borrow_mut();
                all.retain(|c| c.registry.strong_count() > 0); // contexts of pools now gone
                all.push(c.clone());
                c
            })
            .ok()
    }
}

/// The calling thread, in one pool.
pub(crate) struct Me<'a> {
    threads: &'a Threads,
    context: Option<Rc<Context>>,
}

impl Me<'_> {
    /// The shard the calling thread allocates in.
    pub fn shard(&self) -> usize {
        self.context.as_ref().map_or(0, |c| c.shard)
    }

    /// A new buffer id issued by the calling thread's shard, unique in this pool.
    pub fn new_id(&self) -> BufferId {
        let serial = match &self.context {
            Some(c) => {
                let (mut next, mut end) = c.ids.get();
                if next == end {
                    next = self.threads.next_ids.fetch_add(ID_CHUNK, Relaxed);
                    end = next + ID_CHUNK;
                }
                c.ids.set((next + 1, end));
                next
            }
            None => self.threads.next_ids.fetch_add(1, Relaxed),
        };
        (serial << SHARD_BITS) | self.shard() as u64
    }

    /// The graph the calling thread is capturing.
    pub fn capturing(&self) -> Option<GraphId> {
        let c = self.context.as_ref()?;
        let capture = c.capture.borrow();
        capture.as_ref().map(|c| c.graph)
    }

    /// Starts a capture of `graph` on the calling thread; false if it captures already (or is
    /// being torn down).
    pub fn begin_capture(&self, graph: GraphId) -> bool {
        let Some(c) = &self.context else {
            return false;
        };
        let mut capture = c.capture.borrow_mut();
        if capture.is_some() {
            return false;
        }
        *capture = Some(Capture {
            graph,
            used: Vec::new(),
        });
        true
    }

    /// Ends the calling thread's capture.
    pub fn end_capture(&self) -> Option<Capture> {
        self.context.as_ref()?.capture.borrow_mut().take()
    }

    /// Notes buffers newly handed to the calling thread's capture.
    pub fn note_used(&self, ids: &[BufferId]) {
        if let Some(c) = &self.context {
            if let Some(capture) = c.capture.borrow_mut().as_mut() {
                capture.used.extend_from_slice(ids);
            }
        }
    }

    /// Pins `ids` for the calling thread, unpinning what it pinned before.
    pub fn pin(&self, ids: &[BufferId]) {
        if let Some(c) = &self.context {
            let mut pins = lock(&c.pins);
            pins.clear();
            pins.extend_from_slice(ids);
        }
    }

    fn for_each_other(&self, mut f: impl FnMut(&[BufferId]) -> bool) -> bool {
        let mine = self.context.as_ref().map(|c| &c.pins);
        let registry = lock(&self.threads.registry);
        registry
            .iter()
            .filter(|p| mine.is_none_or(|m| !Arc::ptr_eq(p, m)))
            .any(|p| f(&lock(p)))
    }

    /// Whether another thread's last call handed out this buffer's address. (The calling
    /// thread's own pins do not count: its launches using them are queued already.)
    pub fn pinned_by_others(&self, id: BufferId) -> bool {
        self.for_each_other(|pins| pins.contains(&id))
    }

    /// Every buffer other threads have pinned now.
    pub fn pinned_by_others_now(&self) -> HashSet<BufferId> {
        let mut all = HashSet::default();
        self.for_each_other(|pins| {
            all.extend(pins.iter().copied());
            false
        });
        all
    }
}
