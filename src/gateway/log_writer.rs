//! The gateway's decision log: lines are appended in order by one writer
//! thread, so a call never waits on the disk. A line that cannot be written is
//! an error on stderr; the decision stands.

use std::sync::mpsc;

use crate::log::{self, Record};

enum Message {
    Line(Box<Record>),
    Path(String, bool),
    Flush(tokio::sync::oneshot::Sender<()>),
}

/// The handle calls write through.
pub(crate) struct LogWriter {
    tx: mpsc::Sender<Message>,
}

impl LogWriter {
    /// Starts the writer for `settings.log.path` (`""` turns the log off)
    /// and `settings.log.chain`.
    pub(crate) fn start(path: String, chain: bool) -> LogWriter {
        let (tx, rx) = mpsc::channel::<Message>();
        let spawned =
            std::thread::Builder::new()
                .name("zero-policy-log".into())
                .spawn(move || {
                    let (mut path, mut chain) = (path, chain);
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
                            }
                            Message::Path(p, c) => (path, chain) = (p, c),
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

    /// Later lines go to `path`, chained or not.
    pub(crate) fn set_path(&self, path: String, chain: bool) {
        let _ = self.tx.send(Message::Path(path, chain));
    }

    /// Waits until every queued line is written.
    pub(crate) async fn flush(&self) {
        let (done, wait) = tokio::sync::oneshot::channel();
        if self.tx.send(Message::Flush(done)).is_ok() {
            let _ = wait.await;
        }
    }
}
