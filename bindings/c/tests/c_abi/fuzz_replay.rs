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
    assert!(replayed >= 7, "the seeds under fuzz/corpus/c_abi_sequence: {replayed}");
}
