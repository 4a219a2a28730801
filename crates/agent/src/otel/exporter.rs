//! Where finished spans go.

use std::fmt::Debug;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::future::BoxFuture;

use super::span::SpanData;

/// A sink for finished spans. `export` is called on the agent's path, so it
/// must not block: an implementation queues the span (bounded, dropping and
/// counting when full) and sends batches in the background.
pub trait SpanExporter: Send + Sync + Debug {
    /// Takes one finished span.
    fn export(&self, span: SpanData);

    /// Sends everything queued so far; resolves when it was sent (or given
    /// up on). The default has nothing queued.
    fn flush(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

/// An exporter that keeps spans in memory, for tests and inspection.
#[derive(Debug, Clone, Default)]
pub struct InMemoryExporter {
    spans: Arc<Mutex<Vec<SpanData>>>,
}

impl InMemoryExporter {
    /// An empty one.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The spans exported so far, in the order they ended.
    #[must_use]
    pub fn spans(&self) -> Vec<SpanData> {
        self.spans
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Takes the spans exported so far, leaving none.
    #[must_use]
    pub fn take(&self) -> Vec<SpanData> {
        std::mem::take(&mut *self.spans.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl SpanExporter for InMemoryExporter {
    fn export(&self, span: SpanData) {
        self.spans
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(span);
    }
}
