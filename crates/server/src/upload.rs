//! Multipart bodies fed to the engine as an [`Upload`], part by part.

use axum::extract::Multipart;
use axum::extract::multipart::MultipartError;
use axum::http::StatusCode;
use oxiscope_session::upload::{PartHead, Upload, UploadError, UploadFeed};

/// The upload of `multipart`, read by a task of its own while the engine
/// consumes it; the task stops when the engine stops reading.
pub(crate) fn upload(multipart: Multipart) -> Upload {
    let (feed, upload) = Upload::channel(4);
    tokio::spawn(pump(multipart, feed));
    upload
}

async fn pump(mut multipart: Multipart, feed: UploadFeed) {
    loop {
        let mut field = match multipart.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => return,
            Err(e) => return feed.fail(upload_error(&e)).await,
        };
        let head = PartHead {
            name: field.name().map(str::to_owned),
            file_name: field.file_name().map(str::to_owned),
            content_type: field.content_type().map(str::to_owned),
        };
        if !feed.part(head).await {
            return;
        }
        loop {
            match field.chunk().await {
                Ok(Some(bytes)) => {
                    if !feed.chunk(bytes).await {
                        return;
                    }
                }
                Ok(None) => break,
                Err(e) => return feed.fail(upload_error(&e)).await,
            }
        }
    }
}

fn upload_error(e: &MultipartError) -> UploadError {
    if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
        UploadError::TooLarge(e.body_text())
    } else {
        UploadError::Malformed(e.body_text())
    }
}
