//! Size rounding for the caching pool.
//!
//! Requests are rounded up to one of four classes per power of two (2^k, 1.25, 1.5 and 1.75 times
//! 2^k), never below `MIN_BLOCK`. A freed block is reused for any later request of the same class,
//! so at most a quarter of a block is ever wasted, and a workload of varying sizes still hits the
//! cache because nearby sizes share a class.

pub const MIN_BLOCK: u64 = 512;

pub fn round_up(nbytes: u64) -> u64 {
    if nbytes <= MIN_BLOCK {
        return MIN_BLOCK;
    }
    let top = 63 - nbytes.leading_zeros(); // 2^top <= nbytes
    let quarter = 1u64 << (top - 2); // MIN_BLOCK = 2^9, so top >= 9
    nbytes.div_ceil(quarter) * quarter
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_requests_get_the_minimum_block() {
        for n in [0, 1, 100, 511, 512] {
            assert_eq!(round_up(n), MIN_BLOCK);
        }
    }

    #[test]
    fn classes_are_quarters_of_a_power_of_two() {
        assert_eq!(round_up(513), 640);
        assert_eq!(round_up(1024), 1024);
        assert_eq!(round_up(1025), 1280);
        assert_eq!(round_up(1 << 20), 1 << 20);
        assert_eq!(round_up((1 << 20) + 1), (1 << 20) + (1 << 18));
    }

    #[test]
    fn rounding_is_monotonic_and_wastes_at_most_a_quarter() {
        let mut previous = 0;
        for n in (0..200_000u64).step_by(7).chain([u32::MAX as u64, 1 << 40]) {
            let r = round_up(n);
            assert!(r >= n && r >= previous);
            assert!(n <= MIN_BLOCK || (r - n) * 4 <= n, "{n} -> {r}");
            assert_eq!(round_up(r), r, "a class size is its own class");
            previous = r;
        }
    }
}
