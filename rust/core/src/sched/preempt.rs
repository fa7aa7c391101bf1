//! The device's preemption words, as the host hands them out. Guaranteed work raises one word on
//! its own stream before its kernels and lowers it after them (stream memory operations, so the
//! GPU does both); preemptible best-effort kernels yield while any word is raised, and their
//! relaunches wait until every word is lowered. One word per guaranteed task in flight: a task
//! lowering its word never lowers another's. Past `count` concurrent tasks, words are shared
//! (the least-held first); a shared word may then be lowered while a holder still runs, which
//! only lets best-effort kernels back early, never changes a result.

use std::sync::Mutex;

use super::task::lock;

pub struct PreemptSlots {
    holders: Mutex<Vec<u32>>,
}

impl PreemptSlots {
    pub fn new(count: usize) -> Self {
        Self {
            holders: Mutex::new(vec![0; count.max(1)]),
        }
    }

    /// A word for a guaranteed task: a free one if any, else the least-held.
    pub fn take(&self) -> usize {
        let mut h = lock(&self.holders);
        let (slot, _) = h
            .iter()
            .enumerate()
            .min_by_key(|(_, n)| **n)
            .expect("at least one slot");
        h[slot] += 1;
        slot
    }

    /// Gives `slot` back; true when no holder is left, so the word may be lowered.
    pub fn give(&self, slot: usize) -> bool {
        let mut h = lock(&self.holders);
        match h.get_mut(slot) {
            Some(n) if *n > 0 => {
                *n -= 1;
                *n == 0
            }
            _ => false, // not taken: nothing to lower
        }
    }

    /// Holders per word now.
    pub fn holders(&self) -> Vec<u32> {
        lock(&self.holders).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_words_first_then_the_least_shared() {
        let s = PreemptSlots::new(4);
        let taken: Vec<usize> = (0..4).map(|_| s.take()).collect();
        let mut sorted = taken.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, vec![0, 1, 2, 3]);
        let fifth = s.take();
        assert_eq!(s.holders()[fifth], 2);
        assert!(!s.give(fifth), "still held by another task");
        assert!(s.give(fifth));
        assert!(
            !s.give(fifth),
            "a word given back twice is not lowered twice"
        );
        assert!(!s.give(17), "no such word");
        for t in taken.iter().filter(|&&t| t != fifth) {
            assert!(s.give(*t));
        }
        assert_eq!(s.holders(), vec![0; 4]);
    }
}
