//! What a pool call can fail with.

use crate::table::BackendError;

use super::BufferId;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PoolError {
    OutOfMemory {
        requested: u64,
        allocated: u64,
        reserved: u64,
        limit: Option<u64>,
        reason: String,
    },
    QuotaExceeded {
        requested: u64,
        used: u64,
        limit: u64,
        /// Whose quota it is (a scheduler task's name), when it was given one.
        owner: Option<String>,
    },
    /// The quota had room, but its parent (the memory no task has reserved) had not.
    SharedExhausted {
        requested: u64,
        used: u64,
        limit: u64,
    },
    Backend(BackendError),
    UnknownBuffer(BufferId),
    /// Something a graph capture cannot hold (a nested capture, a spilled buffer's restore).
    Capture(String),
    /// No graph of that id in this pool.
    UnknownGraph(u64),
}

impl std::fmt::Display for PoolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PoolError::OutOfMemory {
                requested,
                allocated,
                reserved,
                limit,
                reason,
            } => {
                let limit = limit.map_or("none".to_string(), |l| format!("{l} bytes"));
                write!(
                    f,
                    "out of device memory: requested {requested} bytes with {allocated} allocated, \
                     {reserved} reserved, limit {limit} ({reason})"
                )
            }
            PoolError::QuotaExceeded {
                requested,
                used,
                limit,
                owner,
            } => {
                let whose = owner.as_deref().map_or("memory quota".to_string(), |o| {
                    format!("task memory quota of {o}")
                });
                write!(
                    f,
                    "{whose} exceeded: requested {requested} bytes with {used} of its \
                     {limit}-byte quota in use"
                )
            }
            PoolError::SharedExhausted {
                requested,
                used,
                limit,
            } => write!(
                f,
                "out of unreserved memory: requested {requested} bytes beyond the task's \
                 reservation with {used} of {limit} unreserved bytes in use by tasks"
            ),
            PoolError::Backend(e) => e.fmt(f),
            PoolError::UnknownBuffer(id) => write!(f, "buffer {id} is not live in this pool"),
            PoolError::Capture(message) => f.write_str(message),
            PoolError::UnknownGraph(id) => write!(f, "graph {id} is not live in this pool"),
        }
    }
}

impl From<BackendError> for PoolError {
    fn from(e: BackendError) -> Self {
        PoolError::Backend(e)
    }
}
