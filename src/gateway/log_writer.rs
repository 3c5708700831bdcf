//! The gateway's decision log: lines are appended in order by one writer
//! thread, so a call never waits on the disk. A line that cannot be written is
//! an error on stderr; the decision stands.

use std::sync::mpsc;

use crate::log::{self, Record};

enum Message {
    Line(Box<Record>),
    Path(String, bool, Option<log::syslog::Target>),
    Flush(tokio::sync::oneshot::Sender<()>),
}

/// The handle calls write through.
pub(crate) struct LogWriter {
    tx: mpsc::Sender<Message>,
}

impl LogWriter {
    /// Starts the writer for `settings.log.path` (`""` turns the log off),
    /// `settings.log.chain` and `settings.log.syslog`.
    pub(crate) fn start(
        path: String,
        chain: bool,
        syslog: Option<log::syslog::Target>,
    ) -> LogWriter {
        let (tx, rx) = mpsc::channel::<Message>();
        let spawned =
            std::thread::Builder::new()
                .name("zero-policy-log".into())
                .spawn(move || {
                    let (mut path, mut chain) = (path, chain);
                    let mut sink = Sink::new(syslog);
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
                                if sink.target != target {
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

    /// Later lines go to `path`, chained or not, and to `syslog`.
    pub(crate) fn set_path(&self, path: String, chain: bool, syslog: Option<log::syslog::Target>) {
        let _ = self.tx.send(Message::Path(path, chain, syslog));
    }

    /// Waits until every queued line is written.
    pub(crate) async fn flush(&self) {
        let (done, wait) = tokio::sync::oneshot::channel();
        if self.tx.send(Message::Flush(done)).is_ok() {
            let _ = wait.await;
        }
    }
}

/// The syslog sender of the writer thread, and when to next report drops.
struct Sink {
    target: Option<log::syslog::Target>,
    syslog: Option<log::syslog::Syslog>,
    next_report: u64,
}

impl Sink {
    fn new(target: Option<log::syslog::Target>) -> Sink {
        let syslog = target
            .as_ref()
            .and_then(|t| match log::syslog::Syslog::start(t) {
                Ok(s) => Some(s),
                Err(e) => {
                    crate::output::stderr(&format!("zero-policy serve: {e}\n"));
                    None
                }
            });
        Sink {
            target,
            syslog,
            next_report: 1,
        }
    }

    /// Queues the record; reports drops on stderr at 1, 10, 100, ... records.
    fn send(&mut self, record: &Record) {
        let Some(s) = &self.syslog else {
            return;
        };
        s.send(record);
        let dropped = s.dropped();
        if dropped >= self.next_report {
            crate::output::stderr(&format!(
                "zero-policy serve: syslog `{}` is not keeping up: {dropped} record{} dropped so far (they are in the local log)\n",
                s.address(),
                if dropped == 1 { "" } else { "s" }
            ));
            self.next_report = dropped.saturating_mul(10);
        }
    }
}
