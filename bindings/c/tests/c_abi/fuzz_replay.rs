//! REL-6: the C ABI call-sequence check (`arkagent_c::fuzzing::check_c_abi_sequence`, the
//! cargo-fuzz target `c_abi_sequence`) over its seeds and every regression input, on stable:
//! a sequence that once broke an oracle stays replayed by `cargo test`.

#[test]
fn rel_6_c_abi_sequences_replay_their_seeds_and_regressions() {
    let fuzz = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut replayed = 0;
    for dir in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(fuzz.join(dir).join("c_abi_sequence")) else { continue };
        for entry in entries {
            let path = entry.unwrap().path();
            arkagent_c::fuzzing::check_c_abi_sequence(&std::fs::read(&path).unwrap());
            replayed += 1;
        }
    }
    assert!(replayed >= 23, "the seeds under fuzz/corpus/c_abi_sequence and its regressions: {replayed}");
}

/// REL-6: random sequences on stable, seeded (`ARKAGENT_SEQUENCES` of them, 64 by default;
/// `ARKAGENT_SEQUENCE_SEED` picks the first seed): the check's oracles over inputs no one
/// chose, between cargo-fuzz runs.
#[test]
fn rel_6_c_abi_random_sequences_keep_every_oracle() {
    let count: u64 = std::env::var("ARKAGENT_SEQUENCES").ok().and_then(|n| n.parse().ok()).unwrap_or(64);
    let first: u64 = std::env::var("ARKAGENT_SEQUENCE_SEED").ok().and_then(|n| n.parse().ok()).unwrap_or(1);
    for seed in first..first + count {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let len = 16 + (seed % 112) as usize;
        let data: Vec<u8> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect();
        eprintln!("sequence seed {seed}");
        arkagent_c::fuzzing::check_c_abi_sequence(&data);
    }
}

/// REL-6: replays the one input `ARKAGENT_SEQUENCE_FILE` names (a crash from
/// fuzz/artifacts/c_abi_sequence, a sequence being minimised); nothing without it.
#[test]
fn rel_6_c_abi_sequence_from_a_file() {
    if let Ok(p) = std::env::var("ARKAGENT_SEQUENCE_FILE") {
        arkagent_c::fuzzing::check_c_abi_sequence(&std::fs::read(p).unwrap());
    }
}
