//! PERF-6 (issue 28 item 13): k independent children with model latency L finish in about
//! ⌈k / max_concurrent⌉ × L — timed by the benchmark (`perf_6_children` in benches/core.rs,
//! BENCHMARKS.md); proved here without a clock: the children run in waves of exactly
//! `max_concurrent`, so each wave costs one L.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arkagent::runtime::DelegationConfig;
use arkagent::subagent::{DecomposedTask, SubAgentPolicy};
use arkagent::{AgentRuntime, AgentRuntimeConfig, CancellationToken, HttpRequest, HttpResponse, HttpTransport, TransportError};
use async_trait::async_trait;

use crate::support::{model_config, text_reply, ScriptedModel, API_KEY};

/// A model whose calls take one latency `L` each, served in rendezvous: an arriving call
/// waits until `wave` calls are waiting (or every remaining call has arrived); then the
/// whole group is released to take `L` together — one wave. A runtime that ran fewer
/// children at once would leave calls waiting out their rendezvous (`lonely`).
struct Waves {
    inner: Arc<ScriptedModel>,
    wave: usize,
    total: usize,
    /// (calls arrived, calls waiting, waves released, the size of each wave)
    gate: Mutex<(usize, usize, usize, Vec<usize>)>,
    in_flight: AtomicUsize,
    peak: AtomicUsize,
    lonely: AtomicUsize,
}

impl Waves {
    /// Joins the current group; returns once it is released (or after 3 s alone).
    async fn rendezvous(&self) {
        let wave = {
            let mut gate = self.gate.lock().unwrap();
            gate.0 += 1;
            gate.1 += 1;
            if gate.1 == self.wave || gate.0 == self.total {
                let size = std::mem::take(&mut gate.1);
                gate.2 += 1;
                gate.3.push(size);
                return;
            }
            gate.2
        };
        for _ in 0..1500 {
            tokio::time::sleep(Duration::from_millis(2)).await;
            if self.gate.lock().unwrap().2 > wave {
                return;
            }
        }
        self.lonely.fetch_add(1, Ordering::SeqCst);
    }
}

#[async_trait]
impl HttpTransport for Waves {
    async fn send(&self, request: HttpRequest, cancel: CancellationToken) -> Result<HttpResponse, TransportError> {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
        self.rendezvous().await;
        tokio::time::sleep(Duration::from_millis(20)).await; // L
        let response = self.inner.send(request, cancel).await;
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        response
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn perf_6_independent_children_run_in_waves_of_max_concurrent() {
    for (k, max_concurrent) in [(5usize, 2usize), (6, 3)] {
        let waves = Arc::new(Waves {
            inner: ScriptedModel::with(|_, _| text_reply("done", 5)),
            wave: max_concurrent,
            total: k,
            gate: Mutex::default(),
            in_flight: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            lonely: AtomicUsize::new(0),
        });
        let mut config = AgentRuntimeConfig::new(model_config("http://127.0.0.1:9/v1", API_KEY, "m"));
        let policy = SubAgentPolicy { max_concurrent_children: max_concurrent as u32, max_delegations_per_run: 64, ..Default::default() };
        config.delegation = Some(DelegationConfig { allow_clone: true, policy, ..Default::default() });
        let runtime = AgentRuntime::new(config, waves.clone()).unwrap();
        let tasks: Vec<DecomposedTask> =
            (0..k).map(|i| DecomposedTask { assignee: "clone".into(), task_description: format!("task {i}"), role: None, context: None }).collect();
        let results = runtime.run_decomposed(&tasks, max_concurrent).await.unwrap();
        assert_eq!(results.len(), k);
        assert!(results.iter().all(|r| !r.is_error && r.content == "done"), "{results:?}");
        let (arrived, _, released, sizes) = waves.gate.lock().unwrap().clone();
        assert_eq!(arrived, k, "one model call per child");
        assert_eq!(waves.lonely.load(Ordering::SeqCst), 0, "a call waited alone: the children were not run {max_concurrent} at a time ({sizes:?})");
        assert!(waves.peak.load(Ordering::SeqCst) <= max_concurrent, "never more than max_concurrent at once");
        // So the calls ran in ⌈k / max_concurrent⌉ waves of one latency each.
        assert_eq!(released, k.div_ceil(max_concurrent), "waves: {sizes:?}");
        let full = sizes.iter().filter(|&&n| n == max_concurrent).count();
        assert_eq!(full, k / max_concurrent, "waves: {sizes:?}");
    }
}
