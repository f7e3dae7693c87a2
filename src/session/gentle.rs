//! PERF-2, PERF-9: growth by an eighth. A long chat's largest buffers — the encoding
//! cache (the request body), the history's message slots, the usage records — grow by
//! an eighth of their length at a time rather than doubling, so each carries at most
//! ~12.5 % of slack instead of up to 100 % (at 10,000 turns doubling left 0.92 MB of
//! empty message slots and 0.56 MB of empty usage slots). Amortized appends stay O(1)
//! (a geometric factor of 1.125); large buffers grow by `mremap`, without a copy.

/// The least a buffer grows by: small buffers are not reallocated every append.
const MIN_GROWTH: usize = 16;

/// Makes room in `s` for `extra` more bytes, growing by an eighth at a time (at least
/// 4 KiB: the body is never small).
pub(super) fn reserve_string(s: &mut String, extra: usize) {
    if s.capacity() - s.len() < extra {
        s.reserve_exact(extra.max(s.len() / 8).max(4096));
    }
}

/// Makes room in `v` for `extra` more elements, growing by an eighth at a time (at
/// least [`MIN_GROWTH`] elements).
pub(super) fn reserve_vec<T>(v: &mut Vec<T>, extra: usize) {
    if v.capacity() - v.len() < extra {
        v.reserve_exact(extra.max(v.len() / 8).max(MIN_GROWTH));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_2_vectors_keep_at_most_an_eighth_of_slack() {
        let mut v: Vec<u64> = Vec::new();
        let mut reallocations = 0;
        for i in 0..100_000u64 {
            let before = v.capacity();
            reserve_vec(&mut v, 1);
            v.push(i);
            reallocations += usize::from(v.capacity() != before);
            assert!(v.capacity() <= v.len() + (v.len() / 8).max(MIN_GROWTH), "{} slots for {}", v.capacity(), v.len());
        }
        // Geometric: about log(100_000 / 16) / log(1.125) ≈ 74 growths, not one per push.
        assert!(reallocations < 100, "{reallocations} reallocations");
    }

    #[test]
    fn perf_2_a_batch_gets_room_in_one_growth() {
        let mut v: Vec<u8> = vec![0; 1000];
        v.shrink_to_fit();
        reserve_vec(&mut v, 500);
        assert_eq!(v.capacity(), 1500);
        let mut s = String::from("x");
        reserve_string(&mut s, 10);
        assert!(s.capacity() >= 4097);
    }
}
