//! The queue decision records leave the machine from: bounded, never
//! waited on by a decision, counting what it drops, and retried by one
//! sender thread per destination ([`super::syslog`], [`super::otlp`]).
//!
//! [`Shipper::send`] puts a message in a queue of `bound` entries and
//! returns; a full queue drops the new message and counts it. The sender
//! thread takes one message and up to [`BATCH`] more that are waiting, and
//! hands them to its `deliver` function until it succeeds, pausing between
//! attempts (50 ms, doubling to [`MAX_BACKOFF`]); messages that arrive
//! meanwhile wait in the queue, or are dropped when it is full.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

/// The most messages delivered at once.
pub const BATCH: usize = 64;

/// The longest pause between attempts.
pub const MAX_BACKOFF: Duration = Duration::from_secs(5);

#[derive(Debug, Default)]
struct Counters {
    pending: AtomicU64,
    dropped: AtomicU64,
    sent: AtomicU64,
}

/// A bounded queue and the thread that empties it.
#[derive(Debug)]
pub struct Shipper {
    tx: mpsc::SyncSender<String>,
    counters: Arc<Counters>,
}

impl Shipper {
    /// Starts a sender thread named `name` that calls `deliver` with each
    /// batch until it returns `true`.
    ///
    /// # Errors
    /// The thread cannot start.
    pub fn start(
        name: &str,
        bound: usize,
        mut deliver: impl FnMut(&[String]) -> bool + Send + 'static,
    ) -> Result<Shipper, String> {
        let (tx, rx) = mpsc::sync_channel::<String>(bound.max(1));
        let counters = Arc::new(Counters::default());
        let c = Arc::clone(&counters);
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let mut backoff = Duration::from_millis(50);
                while let Ok(first) = rx.recv() {
                    let mut batch = vec![first];
                    while batch.len() < BATCH {
                        match rx.try_recv() {
                            Ok(m) => batch.push(m),
                            Err(_) => break,
                        }
                    }
                    while !deliver(&batch) {
                        std::thread::sleep(backoff);
                        backoff = (backoff * 2).min(MAX_BACKOFF);
                    }
                    backoff = Duration::from_millis(50);
                    let n = batch.len() as u64;
                    c.sent.fetch_add(n, Ordering::SeqCst);
                    c.pending.fetch_sub(n, Ordering::SeqCst);
                }
            })
            .map_err(|e| format!("cannot start the {name} sender: {e}"))?;
        Ok(Shipper { tx, counters })
    }

    /// Queues one message; never waits. A full queue drops it and counts it.
    pub fn send(&self, message: String) {
        self.counters.pending.fetch_add(1, Ordering::SeqCst);
        if self.tx.try_send(message).is_err() {
            self.counters.pending.fetch_sub(1, Ordering::SeqCst);
            self.counters.dropped.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Messages dropped so far because the queue was full.
    #[must_use]
    pub fn dropped(&self) -> u64 {
        self.counters.dropped.load(Ordering::SeqCst)
    }

    /// Messages delivered so far.
    #[must_use]
    pub fn sent(&self) -> u64 {
        self.counters.sent.load(Ordering::SeqCst)
    }

    /// Waits until every queued message is delivered, or `timeout` passes;
    /// returns how many are still waiting.
    #[must_use]
    pub fn flush(&self, timeout: Duration) -> u64 {
        let deadline = Instant::now() + timeout;
        loop {
            let pending = self.counters.pending.load(Ordering::SeqCst);
            if pending == 0 || Instant::now() >= deadline {
                return pending;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}
