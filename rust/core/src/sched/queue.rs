//! The two queues a task passes through.
//!
//! - `Pending`: tasks waiting for memory, FIFO per class, inspected by admission under the
//!   scheduler's lock (a head that does not fit holds back its class, so FIFO holds).
//! - `Ready`: admitted tasks waiting for a worker, one crossbeam channel per class. Workers take
//!   from them without the scheduler's lock, guaranteed first, and block on all three at once.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver, Select, Sender};

use super::qos::QosClass;
use super::task::Task;

#[derive(Default)]
pub struct Pending {
    queues: [VecDeque<Arc<Task>>; 3],
}

impl Pending {
    pub fn push(&mut self, task: Arc<Task>) {
        self.queues[task.class().index()].push_back(task);
    }

    pub fn head(&self, class: QosClass) -> Option<&Arc<Task>> {
        self.queues[class.index()].front()
    }

    pub fn pop(&mut self, class: QosClass) -> Option<Arc<Task>> {
        self.queues[class.index()].pop_front()
    }

    /// Takes a task out wherever it is; false if it is not queued.
    pub fn remove(&mut self, task: &Task) -> bool {
        let q = &mut self.queues[task.class().index()];
        match q.iter().position(|t| t.id == task.id) {
            Some(i) => {
                q.remove(i);
                true
            }
            None => false,
        }
    }

    /// Takes out every task whose deadline is at or before `now`.
    pub fn take_expired(&mut self, now: Instant) -> Vec<Arc<Task>> {
        let mut out = Vec::new();
        for q in &mut self.queues {
            q.retain(|t| {
                let expired = t.deadline.is_some_and(|d| d <= now);
                if expired {
                    out.push(t.clone());
                }
                !expired
            });
        }
        out
    }

    pub fn next_deadline(&self) -> Option<Instant> {
        self.queues
            .iter()
            .flatten()
            .filter_map(|t| t.deadline)
            .min()
    }

    pub fn len(&self, class: QosClass) -> usize {
        self.queues[class.index()].len()
    }

    pub fn drain(&mut self) -> Vec<Arc<Task>> {
        self.queues.iter_mut().flat_map(|q| q.drain(..)).collect()
    }
}

pub struct Ready {
    tx: [Sender<Arc<Task>>; 3],
    rx: [Receiver<Arc<Task>>; 3],
    wake_tx: Sender<()>,
    wake_rx: Receiver<()>,
}

impl Default for Ready {
    fn default() -> Self {
        let (g, gr) = unbounded();
        let (b, br) = unbounded();
        let (e, er) = unbounded();
        let (wake_tx, wake_rx) = unbounded();
        Self {
            tx: [g, b, e],
            rx: [gr, br, er],
            wake_tx,
            wake_rx,
        }
    }
}

pub enum Popped {
    Task(Arc<Task>),
    /// Someone called `wake`.
    Woken,
    TimedOut,
}

impl Ready {
    pub fn push(&self, task: Arc<Task>) {
        // The receivers live as long as self: sending cannot fail.
        let _ = self.tx[task.class().index()].send(task);
    }

    /// Makes one waiting (or the next) `pop` return `Woken`.
    pub fn wake(&self) {
        let _ = self.wake_tx.send(());
    }

    /// The next admitted task, highest class first; waits up to `timeout` for one.
    pub fn pop(&self, timeout: Duration) -> Popped {
        let deadline = Instant::now().checked_add(timeout);
        loop {
            for rx in &self.rx {
                if let Ok(t) = rx.try_recv() {
                    return Popped::Task(t);
                }
            }
            if self.wake_rx.try_recv().is_ok() {
                return Popped::Woken;
            }
            let mut sel = Select::new();
            for rx in &self.rx {
                sel.recv(rx);
            }
            sel.recv(&self.wake_rx);
            // Ready means "something arrived"; the loop then takes it in class order.
            let ready = match deadline {
                Some(d) => sel
                    .ready_timeout(d.saturating_duration_since(Instant::now()))
                    .is_ok(),
                None => {
                    sel.ready();
                    true
                }
            };
            if !ready {
                return Popped::TimedOut;
            }
        }
    }

    pub fn queued(&self, class: QosClass) -> usize {
        self.rx[class.index()].len()
    }
}
