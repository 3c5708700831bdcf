//! The spool a process that decides one call (`hook`, `run`) sends its
//! record from, so that a receiver down for minutes loses nothing the bound
//! does not account for.
//!
//! Such a process ends right after its call. A record it could not deliver
//! within its wait would die with an in-memory queue ([`super::ship`]), so
//! it is written to a spool file first, and whichever process delivers next
//! sends everything waiting there, oldest first, before its own record.
//!
//! One folder per destination (`spool/syslog-HASH/`, `spool/otlp-HASH/`,
//! the hash of the address), beside the local decision log:
//!
//! - `pending.jsonl`: records waiting, one per line (each a JSON string of
//!   the message as the sender takes it), appended with one `write` each;
//! - `sending.jsonl`: the records taken by the process delivering now, or
//!   left over by one that could not finish; sent before `pending.jsonl`;
//! - `lock`: held (`flock`) by the one process delivering;
//! - `dropped`: how many records were refused because the spool held its
//!   bound; said on stderr when a record is refused and when the spool
//!   empties.
//!
//! Delivery is at least once: a process stopped after a batch was written
//! but before the spool said so sends that batch again next time.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::ship::BATCH;

/// The spool of one destination.
#[derive(Debug, Clone)]
pub struct Spool {
    dir: PathBuf,
    bound: usize,
}

/// What became of a record sent through the spool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shipped {
    /// It, and every record waiting before it, reached the receiver.
    Delivered {
        /// Records delivered, this one included.
        sent: usize,
        /// Records the spool had refused since it last emptied.
        dropped: u64,
    },
    /// It waits in the spool (the receiver is down or slow, or another
    /// process is delivering); the next delivery sends it.
    Waiting {
        /// Records waiting, this one included.
        waiting: usize,
    },
    /// The spool held its bound: the record was not kept.
    Dropped {
        /// Records refused since the spool last emptied, this one included.
        dropped: u64,
    },
}

/// What one delivery found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Drained {
    /// The spool is empty; so many were sent.
    Empty(usize),
    /// The receiver refused a batch, or time ran out; so many were sent.
    Stopped(usize),
    /// Another process is delivering.
    Busy,
}

impl Spool {
    /// The spool of destination `kind` at `address` under `root`, holding at
    /// most `bound` records.
    #[must_use]
    pub fn new(root: &Path, kind: &str, address: &str, bound: usize) -> Spool {
        let hash = super::chain::sha256_hex(address.as_bytes());
        Spool {
            dir: root.join(format!("{kind}-{}", &hash[..16])),
            bound: bound.max(1),
        }
    }

    /// Where the spools are: `spool/` beside the decision log at `log`, or,
    /// with no local log, under `$XDG_STATE_HOME/zero-policy` (or
    /// `~/.local/state/zero-policy`).
    #[must_use]
    pub fn root(log: Option<&Path>) -> Option<PathBuf> {
        if let Some(parent) = log.and_then(Path::parent)
            && !parent.as_os_str().is_empty()
        {
            return Some(parent.join("spool"));
        }
        let state = std::env::var_os("XDG_STATE_HOME")
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
            .or_else(|| super::home().map(|h| h.join(".local/state")))?;
        Some(state.join("zero-policy/spool"))
    }

    /// The spool's folder.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn pending(&self) -> PathBuf {
        self.dir.join("pending.jsonl")
    }

    fn sending(&self) -> PathBuf {
        self.dir.join("sending.jsonl")
    }

    fn cannot(&self, e: &dyn std::fmt::Display) -> String {
        format!("the log spool `{}`: {e}", self.dir.display())
    }

    /// Records waiting: lines in `sending.jsonl` and `pending.jsonl`.
    #[must_use]
    pub fn waiting(&self) -> usize {
        lines_in(&self.sending()) + lines_in(&self.pending())
    }

    /// Records refused since the spool last emptied.
    #[must_use]
    pub fn dropped(&self) -> u64 {
        std::fs::read_to_string(self.dir.join("dropped"))
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Adds `message` at the end, unless the spool holds its bound; then it
    /// counts the record as dropped and returns the count.
    ///
    /// # Errors
    /// The folder or a file cannot be created or written.
    pub fn push(&self, message: &str) -> Result<Result<(), u64>, String> {
        create_private_dir(&self.dir).map_err(|e| self.cannot(&e))?;
        if self.waiting() >= self.bound {
            let dropped = self.dropped() + 1;
            write_replacing(&self.dir, "dropped", format!("{dropped}\n").as_bytes())
                .map_err(|e| self.cannot(&e))?;
            return Ok(Err(dropped));
        }
        let mut line = serde_json::to_string(message).map_err(|e| self.cannot(&e))?;
        line.push('\n');
        let mut options = std::fs::OpenOptions::new();
        options.append(true).create(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(self.pending()).map_err(|e| self.cannot(&e))?;
        // INVARIANT: one `write` per record, so that another process's
        // record never lands inside this one.
        let written = file.write(line.as_bytes()).map_err(|e| self.cannot(&e))?;
        if written != line.len() {
            return Err(self.cannot(&format!(
                "only {written} of {} bytes were written",
                line.len()
            )));
        }
        Ok(Ok(()))
    }

    /// Sends what waits, oldest first, in batches of at most [`BATCH`],
    /// until the spool is empty, `deliver` refuses a batch, or `deadline`
    /// passes. Only one process delivers at a time; the others leave their
    /// records to it, or to the next.
    fn drain(&self, deliver: &mut dyn FnMut(&[String]) -> bool, deadline: Instant) -> Drained {
        let Ok(lock) = open_lock(&self.dir.join("lock")) else {
            return Drained::Stopped(0);
        };
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Drained::Busy,
            Err(std::fs::TryLockError::Error(_)) => return Drained::Stopped(0),
        }
        let mut sent = 0;
        loop {
            if Instant::now() >= deadline {
                return Drained::Stopped(sent);
            }
            let sending = self.sending();
            if !sending.exists() {
                if lines_in(&self.pending()) == 0 {
                    return Drained::Empty(sent);
                }
                // New records go on to a new `pending.jsonl`.
                if std::fs::rename(self.pending(), &sending).is_err() {
                    return Drained::Stopped(sent);
                }
            }
            let messages = read_messages(&sending);
            let mut done = 0;
            for batch in messages.chunks(BATCH) {
                if Instant::now() >= deadline || !deliver(batch) {
                    // What is left stays, in order, for the next delivery.
                    let rest: String = messages[done..]
                        .iter()
                        .filter_map(|m| serde_json::to_string(m).ok())
                        .map(|l| l + "\n")
                        .collect();
                    let _ = write_replacing(&self.dir, "sending.jsonl", rest.as_bytes());
                    return Drained::Stopped(sent);
                }
                done += batch.len();
                sent += batch.len();
            }
            if std::fs::remove_file(&sending).is_err() {
                return Drained::Stopped(sent);
            }
        }
    }

    /// Puts `message` in the spool and delivers what waits with `deliver`
    /// on a thread of its own, waiting at most `wait` for it.
    ///
    /// # Errors
    /// The spool cannot be written: the record is in the local log only.
    pub fn ship(
        &self,
        message: &str,
        deliver: impl FnMut(&[String]) -> bool + Send + 'static,
        wait: Duration,
    ) -> Result<Shipped, String> {
        // A full spool refuses the record, and still delivers what waits,
        // so that the next record finds room once the receiver is back.
        let refused = self.push(message)?.err();
        let deadline = Instant::now() + wait;
        let (tx, rx) = mpsc::channel();
        let spool = self.clone();
        let mut deliver = deliver;
        std::thread::Builder::new()
            .name("log-spool".into())
            .spawn(move || {
                let drained = spool.drain(&mut deliver, deadline);
                let _ = tx.send(drained);
            })
            .map_err(|e| self.cannot(&e))?;
        let drained = rx
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .unwrap_or(Drained::Busy);
        if let Some(dropped) = refused {
            if matches!(drained, Drained::Empty(_)) {
                // Said here, with this record: the count starts again.
                let _ = std::fs::remove_file(self.dir.join("dropped"));
            }
            return Ok(Shipped::Dropped { dropped });
        }
        Ok(match drained {
            Drained::Empty(sent) => {
                let dropped = self.dropped();
                if dropped > 0 {
                    let _ = std::fs::remove_file(self.dir.join("dropped"));
                }
                Shipped::Delivered { sent, dropped }
            }
            Drained::Stopped(_) | Drained::Busy => Shipped::Waiting {
                waiting: self.waiting().max(1),
            },
        })
    }
}

/// Sends `record` to the receivers a process that decides one call is
/// given (`settings.log.syslog`, `settings.log.otlp`) through their spools
/// under `root`, waiting at most `wait` for both together. Returns what to
/// say on stderr: a record that did not leave, one dropped, or drops
/// counted while a receiver was down.
#[must_use]
pub fn send_record(
    record: &super::Record,
    syslog: Option<&super::syslog::Target>,
    otlp: Option<&super::otlp::Target>,
    root: Option<&Path>,
    wait: Duration,
) -> Vec<String> {
    let syslog = syslog.map(|t| {
        (
            "syslog",
            t.address.clone(),
            t.queue,
            super::syslog::framed(record),
            super::syslog::sender(t).map(boxed),
        )
    });
    let otlp = otlp.map(|t| {
        (
            "otlp",
            t.endpoint.clone(),
            t.queue,
            super::otlp::queued(record),
            super::otlp::sender(t).map(boxed),
        )
    });
    let mut notes = Vec::new();
    std::thread::scope(|scope| {
        let running: Vec<_> = [syslog, otlp]
            .into_iter()
            .flatten()
            .map(|(kind, address, bound, message, sender)| {
                scope.spawn(move || {
                    let what = match kind {
                        "syslog" => format!("syslog `{address}`"),
                        _ => format!("the OTLP endpoint `{address}`"),
                    };
                    let deliver = match sender {
                        Ok(d) => d,
                        Err(e) => return Some(format!("{e}; the decision is in the local log only")),
                    };
                    let Some(root) = root else {
                        return Some(format!(
                            "no folder to keep the records for {what} in (set HOME or XDG_STATE_HOME); the decision is in the local log only"
                        ));
                    };
                    let spool = Spool::new(root, kind, &address, bound);
                    match spool.ship(&message, deliver, wait) {
                        Ok(Shipped::Delivered { dropped: 0, .. }) => None,
                        Ok(Shipped::Delivered { dropped, .. }) => Some(format!(
                            "{what} is reachable again; {dropped} decision record(s) were dropped while it was not (its spool holds {bound}); they are in the local log"
                        )),
                        Ok(Shipped::Waiting { waiting }) => Some(format!(
                            "the decision did not reach {what} within {} ms; it waits in `{}` ({waiting} waiting) and leaves with a later decision",
                            wait.as_millis(),
                            spool.dir().display()
                        )),
                        Ok(Shipped::Dropped { dropped }) => Some(format!(
                            "the spool for {what} is full ({bound} records): the decision is in the local log only ({dropped} dropped since it last emptied)"
                        )),
                        Err(e) => Some(format!("{e}; the decision is in the local log only")),
                    }
                })
            })
            .collect();
        for r in running {
            if let Ok(Some(note)) = r.join() {
                notes.push(note);
            }
        }
    });
    notes
}

type Deliver = Box<dyn FnMut(&[String]) -> bool + Send + 'static>;

fn boxed(f: impl FnMut(&[String]) -> bool + Send + 'static) -> Deliver {
    Box::new(f)
}

fn lines_in(path: &Path) -> usize {
    std::fs::File::open(path).map_or(0, |f| std::io::BufReader::new(f).lines().count())
}

/// The messages of a spool file; a line that is not a JSON string (a
/// record cut short by a crash) is skipped.
fn read_messages(path: &Path) -> Vec<String> {
    let Ok(file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    std::io::BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str::<String>(&l).ok())
        .collect()
}

fn open_lock(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// Writes `name` in `dir` whole, readable by its owner only: a temporary
/// file beside it renamed over it (the spool, and the bundle cache).
pub(crate) fn write_replacing(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = dir.join(format!(".{name}.{}", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(&tmp)?;
    file.write_all(bytes)?;
    drop(file);
    std::fs::rename(&tmp, dir.join(name))
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use std::sync::{Arc, Mutex};

    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("zp-spool-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    type Received = Arc<Mutex<Vec<String>>>;

    /// A receiver that is down while `up` is false.
    fn receiver(up: &Arc<Mutex<bool>>) -> (Received, impl FnMut(&[String]) -> bool + Send + use<>) {
        let got: Received = Arc::default();
        let (g, u) = (Arc::clone(&got), Arc::clone(up));
        (got, move |batch: &[String]| {
            if *u.lock().unwrap() {
                g.lock().unwrap().extend(batch.iter().cloned());
                true
            } else {
                false
            }
        })
    }

    #[test]
    fn records_wait_while_the_receiver_is_down_and_leave_in_order_when_it_is_back() {
        let root = scratch("order");
        let spool = Spool::new(&root, "syslog", "127.0.0.1:1", 100);
        let up = Arc::new(Mutex::new(false));
        for i in 0..3 {
            let (got, deliver) = receiver(&up);
            let shipped = spool
                .ship(&format!("r{i}"), deliver, Duration::from_secs(5))
                .unwrap();
            assert_eq!(shipped, Shipped::Waiting { waiting: i + 1 });
            assert!(got.lock().unwrap().is_empty());
        }
        *up.lock().unwrap() = true;
        let (got, deliver) = receiver(&up);
        let shipped = spool.ship("r3", deliver, Duration::from_secs(5)).unwrap();
        assert_eq!(
            shipped,
            Shipped::Delivered {
                sent: 4,
                dropped: 0
            }
        );
        assert_eq!(*got.lock().unwrap(), ["r0", "r1", "r2", "r3"]);
        assert_eq!(spool.waiting(), 0);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_full_spool_drops_and_counts_and_says_so_when_it_empties() {
        let root = scratch("full");
        let spool = Spool::new(&root, "otlp", "http://127.0.0.1:1/v1/logs", 2);
        let up = Arc::new(Mutex::new(false));
        let mut outcomes = Vec::new();
        for i in 0..4 {
            let (_, deliver) = receiver(&up);
            outcomes.push(
                spool
                    .ship(&format!("r{i}"), deliver, Duration::from_secs(5))
                    .unwrap(),
            );
        }
        assert_eq!(
            outcomes,
            [
                Shipped::Waiting { waiting: 1 },
                Shipped::Waiting { waiting: 2 },
                Shipped::Dropped { dropped: 1 },
                Shipped::Dropped { dropped: 2 },
            ]
        );
        *up.lock().unwrap() = true;
        // Full still: this one is refused too, but what waited leaves, and
        // the count, said with it, starts again.
        let (got, deliver) = receiver(&up);
        assert_eq!(
            spool.ship("r4", deliver, Duration::from_secs(5)).unwrap(),
            Shipped::Dropped { dropped: 3 }
        );
        assert_eq!(*got.lock().unwrap(), ["r0", "r1"]);
        assert_eq!(spool.dropped(), 0);
        // The next record finds room.
        let (got, deliver) = receiver(&up);
        assert_eq!(
            spool.ship("r5", deliver, Duration::from_secs(5)).unwrap(),
            Shipped::Delivered {
                sent: 1,
                dropped: 0
            }
        );
        assert_eq!(*got.lock().unwrap(), ["r5"]);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_receiver_that_fails_midway_keeps_the_rest_in_order() {
        let root = scratch("midway");
        let spool = Spool::new(&root, "syslog", "127.0.0.1:2", 1000);
        let up = Arc::new(Mutex::new(false));
        for i in 0..(BATCH + 10) {
            spool.push(&format!("r{i}")).unwrap().unwrap();
        }
        // Accepts one batch, then fails.
        let got: Received = Arc::default();
        let g = Arc::clone(&got);
        let mut calls = 0;
        let deliver = move |batch: &[String]| {
            calls += 1;
            if calls > 1 {
                return false;
            }
            g.lock().unwrap().extend(batch.iter().cloned());
            true
        };
        let shipped = spool.ship("last", deliver, Duration::from_secs(5)).unwrap();
        assert_eq!(shipped, Shipped::Waiting { waiting: 11 });
        assert_eq!(got.lock().unwrap().len(), BATCH);
        *up.lock().unwrap() = true;
        let (got, deliver) = receiver(&up);
        let shipped = spool
            .ship("after", deliver, Duration::from_secs(5))
            .unwrap();
        assert_eq!(
            shipped,
            Shipped::Delivered {
                sent: 12,
                dropped: 0
            }
        );
        let got = got.lock().unwrap();
        assert_eq!(got[0], format!("r{BATCH}"));
        assert_eq!(got[9], format!("r{}", BATCH + 9));
        assert_eq!(got[10..], ["last", "after"]);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_slow_receiver_does_not_hold_the_caller_past_its_wait() {
        let root = scratch("slow");
        let spool = Spool::new(&root, "syslog", "127.0.0.1:3", 10);
        let deliver = |_: &[String]| {
            std::thread::sleep(Duration::from_secs(3));
            false
        };
        let started = Instant::now();
        let shipped = spool
            .ship("r0", deliver, Duration::from_millis(100))
            .unwrap();
        assert_eq!(shipped, Shipped::Waiting { waiting: 1 });
        // Not a timing assertion on speed: the wait is 100 ms, the receiver
        // takes 3 s, and the caller must not have waited for it.
        assert!(started.elapsed() < Duration::from_secs(3));
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn the_spool_lives_beside_the_log_or_in_the_state_folder() {
        assert_eq!(
            Spool::root(Some(Path::new("/var/log/zp/decisions.jsonl"))),
            Some(PathBuf::from("/var/log/zp/spool"))
        );
        let a = Spool::new(Path::new("/s"), "syslog", "a:1", 1);
        let b = Spool::new(Path::new("/s"), "syslog", "b:1", 1);
        assert_ne!(a.dir(), b.dir());
        assert!(a.dir().to_string_lossy().starts_with("/s/syslog-"));
    }
}
