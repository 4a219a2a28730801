//! The spinner on stderr while a reply has not sent anything yet.

use std::io::{IsTerminal as _, Write as _};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// The frames, one every [`FRAME`].
pub(crate) const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const FRAME: Duration = Duration::from_millis(80);

/// A spinner drawn on stderr by a thread until [`Spinner::stop`] (or
/// drop), which erases it. Only on a terminal: elsewhere it does nothing.
#[derive(Debug)]
pub(crate) struct Spinner {
    running: Option<(Arc<AtomicBool>, JoinHandle<()>)>,
}

impl Spinner {
    /// Starts spinning when stderr is a terminal.
    pub(crate) fn start() -> Self {
        if !std::io::stderr().is_terminal() {
            return Self { running: None };
        }
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let handle = std::thread::spawn(move || {
            let mut frames = FRAMES.iter().cycle();
            while !flag.load(Ordering::Relaxed) {
                if let Some(frame) = frames.next() {
                    let mut err = std::io::stderr().lock();
                    let _ = write!(err, "\r{frame} ");
                    let _ = err.flush();
                }
                std::thread::park_timeout(FRAME);
            }
        });
        Self {
            running: Some((stop, handle)),
        }
    }

    /// Stops the spinner and erases it, before anything else is printed.
    pub(crate) fn stop(&mut self) {
        let Some((stop, handle)) = self.running.take() else {
            return;
        };
        stop.store(true, Ordering::Relaxed);
        handle.thread().unpark();
        let _ = handle.join();
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[K");
        let _ = err.flush();
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.stop();
    }
}
