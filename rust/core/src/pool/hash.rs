//! Hash maps keyed by addresses, buffer and quota ids and stream handles.

use std::hash::{BuildHasherDefault, Hasher};

/// A multiplicative hash: it spreads integer keys well and costs a fraction of the default
/// SipHash on the per-op path.
#[derive(Default)]
pub(crate) struct IntHasher(u64);

impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0 ^ x)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(29);
    }
}

pub(crate) type HashMap<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<IntHasher>>;
pub(crate) type HashSet<K> = std::collections::HashSet<K, BuildHasherDefault<IntHasher>>;
