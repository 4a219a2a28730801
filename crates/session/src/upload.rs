//! [`Upload`]: a multipart upload as the engine reads it, part by part and
//! chunk by chunk, from whatever door received it. The door feeds it
//! through an [`UploadFeed`] (the HTTP edge from its multipart body); the
//! engine never sees the wire format.

use bytes::Bytes;
use tokio::sync::mpsc;

/// The head of one part of an upload.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartHead {
    /// The part's form name.
    pub name: Option<String>,
    /// The file name the sender gave.
    pub file_name: Option<String>,
    /// The content type the sender gave.
    pub content_type: Option<String>,
}

/// Why an upload's body could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UploadError {
    /// The body is over the door's size limit.
    #[error("The upload is too large: {0}")]
    TooLarge(String),
    /// The body is not a valid multipart body.
    #[error("The multipart body is malformed: {0}")]
    Malformed(String),
}

enum Event {
    Part(PartHead),
    Chunk(Bytes),
}

/// The receiving end: the engine reads parts and their chunks in order.
#[derive(Debug)]
pub struct Upload {
    events: mpsc::Receiver<Result<Event, UploadError>>,
    /// A part head read while the previous part's chunks were read.
    next: Option<PartHead>,
    done: bool,
}

/// The sending end, held by the door.
#[derive(Debug, Clone)]
pub struct UploadFeed {
    events: mpsc::Sender<Result<Event, UploadError>>,
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Part(head) => f.debug_tuple("Part").field(head).finish(),
            Self::Chunk(bytes) => write!(f, "Chunk({} bytes)", bytes.len()),
        }
    }
}

impl Upload {
    /// A connected feed and upload; the feed waits while `capacity` events
    /// are unread, so a slow engine slows the sender down.
    #[must_use]
    pub fn channel(capacity: usize) -> (UploadFeed, Self) {
        let (events, rx) = mpsc::channel(capacity.max(1));
        (
            UploadFeed { events },
            Self {
                events: rx,
                next: None,
                done: false,
            },
        )
    }

    /// Moves to the next part, skipping what is left of the current one;
    /// `None` at the end of the upload.
    ///
    /// # Errors
    /// The body could not be read.
    pub async fn next_part(&mut self) -> Result<Option<PartHead>, UploadError> {
        if let Some(head) = self.next.take() {
            return Ok(Some(head));
        }
        while let Some(event) = self.recv().await? {
            if let Event::Part(head) = event {
                return Ok(Some(head));
            }
        }
        Ok(None)
    }

    /// The next chunk of the current part; `None` at its end.
    ///
    /// # Errors
    /// The body could not be read.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, UploadError> {
        if self.next.is_some() {
            return Ok(None);
        }
        match self.recv().await? {
            Some(Event::Chunk(bytes)) => Ok(Some(bytes)),
            Some(Event::Part(head)) => {
                self.next = Some(head);
                Ok(None)
            }
            None => Ok(None),
        }
    }

    async fn recv(&mut self) -> Result<Option<Event>, UploadError> {
        if self.done {
            return Ok(None);
        }
        match self.events.recv().await {
            Some(Ok(event)) => Ok(Some(event)),
            Some(Err(e)) => {
                self.done = true;
                Err(e)
            }
            None => {
                self.done = true;
                Ok(None)
            }
        }
    }
}

impl UploadFeed {
    /// Starts a part; `false` once the engine stopped reading.
    pub async fn part(&self, head: PartHead) -> bool {
        self.events.send(Ok(Event::Part(head))).await.is_ok()
    }

    /// Adds a chunk to the current part; `false` once the engine stopped
    /// reading.
    pub async fn chunk(&self, bytes: Bytes) -> bool {
        self.events.send(Ok(Event::Chunk(bytes))).await.is_ok()
    }

    /// Ends the upload with an error.
    pub async fn fail(&self, error: UploadError) {
        // The engine may have stopped reading already; then nobody cares.
        let _ = self.events.send(Err(error)).await;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn head(name: &str) -> PartHead {
        PartHead {
            name: Some(name.to_owned()),
            ..PartHead::default()
        }
    }

    #[tokio::test]
    async fn parts_and_chunks_arrive_in_order_and_unread_chunks_are_skipped() {
        let (feed, mut upload) = Upload::channel(8);
        tokio::spawn(async move {
            feed.part(head("a")).await;
            feed.chunk(Bytes::from_static(b"1")).await;
            feed.chunk(Bytes::from_static(b"2")).await;
            feed.part(head("b")).await;
            feed.chunk(Bytes::from_static(b"3")).await;
            feed.part(head("c")).await;
        });
        assert_eq!(upload.next_part().await.unwrap(), Some(head("a")));
        assert_eq!(upload.chunk().await.unwrap().unwrap(), "1");
        // "2" is skipped by moving on.
        assert_eq!(upload.next_part().await.unwrap(), Some(head("b")));
        assert_eq!(upload.chunk().await.unwrap().unwrap(), "3");
        assert_eq!(upload.chunk().await.unwrap(), None);
        assert_eq!(upload.chunk().await.unwrap(), None, "still at the end of b");
        assert_eq!(upload.next_part().await.unwrap(), Some(head("c")));
        assert_eq!(upload.chunk().await.unwrap(), None);
        assert_eq!(upload.next_part().await.unwrap(), None);
    }

    #[tokio::test]
    async fn an_error_ends_the_upload() {
        let (feed, mut upload) = Upload::channel(1);
        tokio::spawn(async move {
            feed.part(head("a")).await;
            feed.fail(UploadError::TooLarge("x".into())).await;
        });
        assert_eq!(upload.next_part().await.unwrap(), Some(head("a")));
        assert_eq!(upload.chunk().await, Err(UploadError::TooLarge("x".into())));
        assert_eq!(upload.next_part().await.unwrap(), None);
    }
}
