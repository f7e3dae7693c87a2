//! Episodic memory: what context compression archives out of the live history.

mod episode;

pub use episode::EpisodicMemory;
