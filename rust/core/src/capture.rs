//! Whether the calling thread is capturing a graph (in any pool). Launch pacing reads it: a
//! captured launch runs later, on replay, so pacing it now would only record events into the
//! graph and query them, which a capturing stream forbids.

use std::cell::Cell;

thread_local! {
    static CAPTURES: Cell<u32> = const { Cell::new(0) };
}

/// True while the calling thread captures.
pub fn active() -> bool {
    CAPTURES.with(|c| c.get() > 0)
}

pub(crate) fn enter() {
    CAPTURES.with(|c| c.set(c.get() + 1));
}

pub(crate) fn exit() {
    CAPTURES.with(|c| c.set(c.get().saturating_sub(1)));
}
