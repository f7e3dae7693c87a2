//! The SIGKILL harnesses' one loop (STORE-3, TOOL-2, CHAT-1): a child process — a copy of
//! this test binary re-run with one child test — works on a SQLite store until it prints
//! `CHILD-READY`, then is SIGKILLed at a random instant; the caller checks the store.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::store::temp_dir;

/// A temporary directory with a copy of this test binary (a rebuild while the harness runs
/// must not pull it away; ~100 MB, so it never stays behind) and a random source.
pub struct Harness {
    pub dir: PathBuf,
    exe: PathBuf,
    seed: u64,
}

impl Harness {
    pub fn new(name: &str) -> Self {
        let dir = temp_dir(name);
        let exe = dir.join("harness");
        std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
        let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64 | 1;
        Self { dir, exe, seed }
    }

    /// xorshift64.
    pub fn random(&mut self) -> u64 {
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        self.seed
    }

    /// Runs child test `child` (its module path) with `env` until it is ready, lets it work
    /// for a random time below `max_micros`, and SIGKILLs it. Panics when the child exits
    /// before it is ready (the store did not reopen).
    pub fn kill_once(&mut self, kill: usize, child: &str, env: &[(&str, &Path)], max_micros: u64) {
        let mut command = Command::new(&self.exe);
        command.args(["--exact", child, "--nocapture", "--test-threads=1"]).stdout(Stdio::piped()).stderr(Stdio::null());
        for (key, value) in env {
            command.env(key, value);
        }
        // A spawn can fail for a moment on a loaded machine (EAGAIN); a few tries, then
        // the error itself.
        let mut process = (0..5)
            .find_map(|_| command.spawn().map_err(|e| eprintln!("kill {kill}: spawn failed: {e:?}; trying again")).ok().or_else(|| {
                std::thread::sleep(Duration::from_millis(100));
                None
            }))
            .unwrap_or_else(|| panic!("kill {kill}: the child could not be spawned: {:?}", command.spawn().err()));
        let mut out = BufReader::new(process.stdout.take().unwrap());
        let mut line = String::new();
        while !line.contains("CHILD-READY") {
            line.clear();
            if out.read_line(&mut line).unwrap() == 0 {
                let status = process.wait().unwrap();
                panic!("kill {kill}: the child exited ({status}) before running: the store did not reopen");
            }
        }
        std::thread::sleep(Duration::from_micros(self.random() % max_micros));
        process.kill().unwrap(); // SIGKILL
        process.wait().unwrap();
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
