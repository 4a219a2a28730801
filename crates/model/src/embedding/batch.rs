//! Splitting a request into the provider's batch size and sending the
//! chunks concurrently, in order.

use std::future::Future;
use std::time::Instant;

use futures_util::stream::{self, StreamExt};

use super::model::{EmbeddingResponse, EmbeddingSource, EmbeddingUsage};
use crate::ModelError;

/// How many chunks of one request are in flight at once, by default.
pub const DEFAULT_EMBEDDING_CONCURRENCY: usize = 4;

/// Embeds `texts` in chunks of at most `batch_size`, calling `call` for
/// each chunk with at most `concurrency` calls in flight, and merges the
/// answers in input order: vectors concatenated chunk by chunk, tokens
/// summed, the time measured around the whole call. `call` does one
/// provider request (and its retries); `model` names the model in the
/// answer when no chunk does (and for an empty `texts`, which calls
/// nothing). `batch_size` and `concurrency` below 1 count as 1.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use oxiscope_model::{EmbeddingResponse, embed_in_batches};
///
/// let texts: Vec<String> = (0..25).map(|i| i.to_string()).collect();
/// let answer = embed_in_batches("m", &texts, 10, 4, |chunk| async move {
///     let mut response = EmbeddingResponse::empty("m");
///     response.embeddings = chunk.iter().map(|t| vec![t.parse::<f32>().unwrap()]).collect();
///     response.usage.tokens = Some(chunk.len() as u64);
///     Ok(response)
/// })
/// .await?;
/// assert_eq!(answer.embeddings[24], vec![24.0]);
/// assert_eq!(answer.usage.tokens, Some(25));
/// # Ok::<(), oxiscope_model::ModelError>(())
/// # }).unwrap();
/// ```
///
/// # Errors
/// The first failing chunk's error, in input order (the chunks still in
/// flight are abandoned); [`ModelError::Stream`] when a chunk's answer
/// has another number of vectors than the chunk has texts.
///
/// # Cancel safety
/// Dropping the future abandons every chunk in flight.
pub async fn embed_in_batches<'t, F, Fut>(
    model: &str,
    texts: &'t [String],
    batch_size: usize,
    concurrency: usize,
    mut call: F,
) -> Result<EmbeddingResponse, ModelError>
where
    F: FnMut(&'t [String]) -> Fut,
    Fut: Future<Output = Result<EmbeddingResponse, ModelError>>,
{
    if texts.is_empty() {
        return Ok(EmbeddingResponse::empty(model));
    }
    let started = Instant::now();
    // The calls are built up front (a future does nothing until polled);
    // `buffered` then runs `concurrency` of them at a time, in order.
    let mut calls = Vec::with_capacity(texts.len().div_ceil(batch_size.max(1)));
    for chunk in texts.chunks(batch_size.max(1)) {
        let expected = chunk.len();
        let answer = call(chunk);
        calls.push(async move { (expected, answer.await) });
    }
    let mut answers = stream::iter(calls).buffered(concurrency.max(1));
    let mut embeddings = Vec::with_capacity(texts.len());
    let mut usage = EmbeddingUsage::default();
    let mut first = true;
    let mut answered_model = None;
    while let Some((expected, answer)) = answers.next().await {
        let answer = answer?;
        if answer.embeddings.len() != expected {
            return Err(ModelError::Stream {
                message: format!(
                    "the embedding model answered {} vectors for {expected} texts",
                    answer.embeddings.len()
                ),
            });
        }
        if first {
            usage.tokens = answer.usage.tokens;
            first = false;
        } else {
            usage.add_tokens(answer.usage.tokens);
        }
        if answered_model.is_none() && !answer.model.is_empty() {
            answered_model = Some(answer.model);
        }
        embeddings.extend(answer.embeddings);
    }
    usage.time = started.elapsed();
    Ok(EmbeddingResponse {
        embeddings,
        model: answered_model.unwrap_or_else(|| model.to_owned()),
        usage,
        source: EmbeddingSource::Api,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    fn answer(chunk: &[String], tokens: Option<u64>) -> EmbeddingResponse {
        let mut response = EmbeddingResponse::empty("");
        response.embeddings = chunk
            .iter()
            .map(|t| vec![t.parse::<f32>().unwrap()])
            .collect();
        response.usage.tokens = tokens;
        response
    }

    fn texts(n: usize) -> Vec<String> {
        (0..n).map(|i| i.to_string()).collect()
    }

    #[tokio::test]
    async fn chunks_answering_in_reverse_order_keep_input_order_and_bounded_concurrency() {
        let in_flight = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let texts = texts(95);
        let answer = embed_in_batches("m", &texts, 10, 4, |chunk| {
            let in_flight = Arc::clone(&in_flight);
            let peak = Arc::clone(&peak);
            async move {
                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                // Earlier chunks answer later.
                let first: u64 = chunk[0].parse().unwrap();
                tokio::time::sleep(Duration::from_millis(10 + (90 - first) / 2)).await;
                in_flight.fetch_sub(1, Ordering::SeqCst);
                Ok(answer(chunk, Some(1)))
            }
        })
        .await
        .unwrap();
        let expected: Vec<Vec<f32>> = (0..95).map(|i| vec![i as f32]).collect();
        assert_eq!(answer.embeddings, expected);
        assert_eq!(answer.usage.tokens, Some(10));
        assert_eq!(answer.model, "m");
        assert_eq!(peak.load(Ordering::SeqCst), 4);
    }

    #[tokio::test]
    async fn unknown_tokens_stay_unknown_and_known_ones_are_summed() {
        let texts = texts(3);
        let none = embed_in_batches("m", &texts, 1, 2, |c| async move { Ok(answer(c, None)) })
            .await
            .unwrap();
        assert_eq!(none.usage.tokens, None);
        let mixed = embed_in_batches("m", &texts, 1, 2, |c| async move {
            let tokens = (c[0] != "1").then_some(5);
            Ok(answer(c, tokens))
        })
        .await
        .unwrap();
        assert_eq!(mixed.usage.tokens, Some(10));
    }

    #[tokio::test]
    async fn a_short_answer_and_a_failing_chunk_are_errors() {
        let texts = texts(4);
        let short = embed_in_batches(
            "m",
            &texts,
            2,
            2,
            |c| async move { Ok(answer(&c[..1], None)) },
        )
        .await
        .unwrap_err();
        assert!(matches!(short, ModelError::Stream { .. }), "{short:?}");
        let failed = embed_in_batches("m", &texts, 2, 2, |c| async move {
            if c[0] == "2" {
                Err(ModelError::Connection {
                    message: "down".into(),
                })
            } else {
                Ok(answer(c, None))
            }
        })
        .await
        .unwrap_err();
        assert!(matches!(failed, ModelError::Connection { .. }));
    }

    #[tokio::test]
    async fn an_empty_request_calls_nothing() {
        let calls = AtomicUsize::new(0);
        let answer = embed_in_batches("m", &[], 0, 0, |c: &[String]| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move { Ok(answer(c, None)) }
        })
        .await
        .unwrap();
        assert!(answer.embeddings.is_empty());
        assert_eq!(calls.load(Ordering::SeqCst), 0);
    }
}
