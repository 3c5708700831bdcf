//! The gateway's decision log: lines are appended in order by one writer
//! thread, so a call never waits on the disk. A line that cannot be written is
//! an error on stderr; the decision stands.

use std::sync::mpsc;

use crate::log::{self, Record};

enum Message {
    Line(Box<Record>),
    Path(String, bool, Remote),
    Flush(tokio::sync::oneshot::Sender<()>),
}

/// The handle calls write through.
pub(crate) struct LogWriter {
    tx: mpsc::Sender<Message>,
}

impl LogWriter {
    /// Starts the writer for `settings.log.path` (`""` turns the log off),
    /// `settings.log.chain` and `settings.log.syslog`.
    pub(crate) fn start(path: String, chain: bool, remote: Remote) -> LogWriter {
        let (tx, rx) = mpsc::channel::<Message>();
        let spawned =
            std::thread::Builder::new()
                .name("zero-policy-log".into())
                .spawn(move || {
                    let (mut path, mut chain) = (path, chain);
                    let mut sink = Sink::new(remote);
                    while let Ok(m) = rx.recv() {
                        match m {
                            Message::Line(record) => {
                                let result = log::resolve_path(&path, log::home().as_deref())
                                    .and_then(|p| match p {
                                        Some(p) => {
                                            log::append_record(&p, &record, Some(chain).into())
                                        }
                                        None => Ok(()),
                                    });
                                if let Err(e) = result {
                                    crate::output::stderr(&format!("zero-policy serve: {e}\n"));
                                }
                                sink.send(&record);
                            }
                            Message::Path(p, c, target) => {
                                (path, chain) = (p, c);
                                if sink.remote != target {
                                    sink = Sink::new(target);
                                }
                            }
                            Message::Flush(done) => {
                                let _ = done.send(());
                            }
                        }
                    }
                });
        if let Err(e) = spawned {
            crate::output::stderr(&format!(
                "zero-policy serve: cannot start the decision log writer: {e}\n"
            ));
        }
        LogWriter { tx }
    }

    /// Queues one line.
    pub(crate) fn write(&self, record: Record) {
        if self.tx.send(Message::Line(Box::new(record))).is_err() {
            crate::output::stderr("zero-policy serve: the decision log writer has stopped\n");
        }
    }

    /// Later lines go to `path`, chained or not, and to `remote`.
    pub(crate) fn set_path(&self, path: String, chain: bool, remote: Remote) {
        let _ = self.tx.send(Message::Path(path, chain, remote));
    }

    /// Waits until every queued line is written.
    pub(crate) async fn flush(&self) {
        let (done, wait) = tokio::sync::oneshot::channel();
        if self.tx.send(Message::Flush(done)).is_ok() {
            let _ = wait.await;
        }
    }
}

/// Where records go besides the file: `settings.log.syslog` and `.otlp`.
pub(crate) type Remote = (Option<log::syslog::Target>, Option<log::otlp::Target>);

/// The remote senders of the writer thread, and when to next report drops.
pub(crate) struct Sink {
    remote: Remote,
    syslog: Option<log::syslog::Syslog>,
    otlp: Option<log::otlp::Otlp>,
    next_report: [u64; 2],
}

impl Sink {
    /// Starts the senders `remote` names; one that cannot start is said on stderr.
    pub(crate) fn new(remote: Remote) -> Sink {
        fn started<T>(r: Result<T, String>) -> Option<T> {
            match r {
                Ok(s) => Some(s),
                Err(e) => {
                    crate::output::stderr(&format!("zero-policy serve: {e}\n"));
                    None
                }
            }
        }
        let syslog = remote
            .0
            .as_ref()
            .and_then(|t| started(log::syslog::Syslog::start(t)));
        let otlp = remote
            .1
            .as_ref()
            .and_then(|t| started(log::otlp::Otlp::start(t)));
        Sink {
            remote,
            syslog,
            otlp,
            next_report: [1, 1],
        }
    }

    /// Where it sends.
    pub(crate) fn remote(&self) -> &Remote {
        &self.remote
    }

    /// Waits up to `timeout` for what is queued to leave.
    pub(crate) fn flush(&self, timeout: std::time::Duration) {
        let deadline = std::time::Instant::now() + timeout;
        let left = || deadline.saturating_duration_since(std::time::Instant::now());
        let late = |n: u64, what: &str, to: &str| {
            if n > 0 {
                crate::output::stderr(&format!(
                    "zero-policy serve: {n} record{} did not reach {what} `{to}` before the stop (they are in the local log)\n",
                    if n == 1 { "" } else { "s" }
                ));
            }
        };
        if let Some(s) = &self.syslog {
            late(s.flush(left()), "syslog", s.address());
        }
        if let Some(o) = &self.otlp {
            late(o.flush(left()), "the OTLP endpoint", o.endpoint());
        }
    }

    /// Queues the record; reports drops on stderr at 1, 10, 100, ... records.
    pub(crate) fn send(&mut self, record: &Record) {
        if let Some(s) = &self.syslog {
            s.send(record);
            report(&mut self.next_report[0], s.dropped(), "syslog", s.address());
        }
        if let Some(o) = &self.otlp {
            o.send(record);
            report(
                &mut self.next_report[1],
                o.dropped(),
                "OTLP endpoint",
                o.endpoint(),
            );
        }
    }
}

fn report(next: &mut u64, dropped: u64, what: &str, to: &str) {
    if dropped >= *next {
        crate::output::stderr(&format!(
            "zero-policy serve: {what} `{to}` is not keeping up: {dropped} record{} dropped so far (they are in the local log)\n",
            if dropped == 1 { "" } else { "s" }
        ));
        *next = dropped.saturating_mul(10);
    }
}
