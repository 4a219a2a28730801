//! The in-memory side of [`SqliteVectorStore`](super::SqliteVectorStore):
//! a collection's normalised vectors in one contiguous matrix, scanned
//! with a bounded heap.

use std::collections::BinaryHeap;

use super::matches_filter;
use crate::error::{Error, Result};
use crate::section::{Chunk, Metadata};

/// A collection held in memory.
#[derive(Debug)]
pub(super) struct Loaded {
    pub(super) dimensions: usize,
    pub(super) rows: Vec<Row>,
    /// `rows.len() * dimensions` normalised components, row after row.
    pub(super) matrix: Vec<f32>,
}

#[derive(Debug)]
pub(super) struct Row {
    pub(super) document_id: String,
    pub(super) chunk: Chunk,
}

/// Checks `vector` and returns it scaled to length 1 (all zeros stays all
/// zeros).
pub(super) fn normalised(vector: &[f32], dimensions: usize) -> Result<Vec<f32>> {
    if vector.len() != dimensions {
        return Err(Error::DimensionMismatch {
            expected: dimensions,
            actual: vector.len(),
        });
    }
    if !vector.iter().all(|x| x.is_finite()) {
        return Err(Error::InvalidVector);
    }
    let norm = vector
        .iter()
        .map(|x| f64::from(*x) * f64::from(*x))
        .sum::<f64>()
        .sqrt();
    if norm == 0.0 {
        return Ok(vector.to_vec());
    }
    #[allow(clippy::cast_possible_truncation)]
    Ok(vector
        .iter()
        .map(|x| (f64::from(*x) / norm) as f32)
        .collect())
}

/// A hit in the bounded heap: ordered so the heap's top is the worst.
#[derive(Debug, PartialEq)]
struct Hit(f32, usize);

impl Eq for Hit {}

impl PartialOrd for Hit {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Hit {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // Reversed score: the heap's maximum is the lowest score; among
        // equal scores the later row is worse.
        other.0.total_cmp(&self.0).then(self.1.cmp(&other.1))
    }
}

/// The dot product, over eight independent sums so the compiler can use
/// vector instructions (a single running sum cannot be reordered).
pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for ((s, x), y) in lanes.iter_mut().zip(x).zip(y) {
            *s += x * y;
        }
    }
    lanes.iter().sum::<f32>() + tail
}

impl Loaded {
    pub(super) fn search(
        &self,
        query: &[f32],
        top_k: usize,
        filter: Option<&Metadata>,
    ) -> Vec<(f32, usize)> {
        if top_k == 0 || self.rows.is_empty() {
            return Vec::new();
        }
        let mut heap: BinaryHeap<Hit> = BinaryHeap::with_capacity(top_k + 1);
        for (i, (row, vector)) in self
            .rows
            .iter()
            .zip(self.matrix.chunks_exact(self.dimensions))
            .enumerate()
        {
            if !matches_filter(&row.chunk.metadata, filter) {
                continue;
            }
            let hit = Hit(dot(query, vector), i);
            if heap.len() < top_k {
                heap.push(hit);
            } else if heap.peek().is_some_and(|worst| hit < *worst) {
                heap.pop();
                heap.push(hit);
            }
        }
        // Ascending by `Ord` = best first.
        heap.into_sorted_vec()
            .into_iter()
            .map(|Hit(s, i)| (s, i))
            .collect()
    }
}
