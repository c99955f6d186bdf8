//! Suzent's memory search: sentence embeddings, an in-memory vector index and the fusion of
//! vector and full-text (BM25) rankings into one hybrid ranking.
//!
//! The local embedder runs all-MiniLM-L6-v2 in process with candle (feature `local-model`): it
//! loads `model.safetensors`, `tokenizer.json` and `config.json` from a folder, mean-pools the
//! token embeddings over the attention mask and L2-normalizes them (384 dimensions).
//!
//! ```
//! use suzent_memory::{VectorIndex, fuse};
//!
//! let mut index = VectorIndex::new(2);
//! index.push(1, &[1.0, 0.0]).unwrap();
//! index.push(2, &[0.0, 1.0]).unwrap();
//! let vector = index.top_k(&[0.9, 0.1], 2, 0.5);
//! assert_eq!(vector.iter().map(|h| h.0).collect::<Vec<_>>(), [1]);
//! // Entry 7 was found by full-text search only, entry 1 by both.
//! let fused = fuse(&[1, 7], &vector, 10);
//! assert_eq!(fused[0].id, 1);
//! assert_eq!(fused[0].matched_by, ["text", "vector"]);
//! ```
#![deny(missing_docs)]

use std::collections::HashMap;

#[cfg(feature = "local-model")]
mod minilm;

#[cfg(feature = "local-model")]
pub use minilm::MiniLmEmbedder;

/// Dimensions of all-MiniLM-L6-v2 embeddings.
pub const MINILM_DIMS: usize = 384;

/// The files a local model folder must hold.
pub const MODEL_FILES: &[&str] = &["model.safetensors", "tokenizer.json", "config.json"];

/// Reciprocal-rank-fusion constant (the usual 60).
pub const RRF_K: f64 = 60.0;

/// An error of the memory search.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// The model folder lacks a file or a file cannot be read.
    #[error("cannot load the embedding model from {path}: {message}")]
    Model {
        /// The folder or file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// Tokenizing or running the model failed.
    #[error("embedding failed: {0}")]
    Embed(String),
    /// A vector of the wrong length.
    #[error("embedding has {got} dimensions, the index holds {want}")]
    Dimensions {
        /// The index's dimensions.
        want: usize,
        /// The vector's.
        got: usize,
    },
}

/// Turns texts into L2-normalized vectors.
pub trait Embedder: Send + Sync + std::fmt::Debug {
    /// One vector per text, in order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, MemoryError>;
    /// Length of the vectors.
    fn dims(&self) -> usize;
    /// A short name for messages (`all-MiniLM-L6-v2 (local)`).
    fn name(&self) -> &str;
}

/// Flat, exact (brute-force) cosine index over normalized vectors: ids and one contiguous
/// buffer, scanned with dot products. Each id holds one vector.
#[derive(Debug, Clone, Default)]
pub struct VectorIndex {
    dims: usize,
    ids: Vec<i64>,
    data: Vec<f32>,
    /// Where each id's vector is (its row in `ids` and `data`).
    rows: HashMap<i64, usize>,
}

impl VectorIndex {
    /// An empty index of `dims`-long vectors.
    pub fn new(dims: usize) -> Self {
        Self {
            dims,
            ids: Vec::new(),
            data: Vec::new(),
            rows: HashMap::new(),
        }
    }

    /// Adds a vector (already normalized), or replaces the vector of an id already in the
    /// index (an entry embedded again, or read twice). Ids may come in any order.
    ///
    /// Errors: [`MemoryError::Dimensions`] when `vector` is not `dims` long.
    pub fn push(&mut self, id: i64, vector: &[f32]) -> Result<(), MemoryError> {
        if vector.len() != self.dims {
            return Err(MemoryError::Dimensions {
                want: self.dims,
                got: vector.len(),
            });
        }
        match self.rows.get(&id) {
            Some(&row) => {
                self.data[row * self.dims..(row + 1) * self.dims].copy_from_slice(vector);
            }
            None => {
                self.rows.insert(id, self.ids.len());
                self.ids.push(id);
                self.data.extend_from_slice(vector);
            }
        }
        Ok(())
    }

    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the index is empty.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The highest id stored (0 when empty), for loading only newer rows.
    pub fn last_id(&self) -> i64 {
        self.ids.iter().copied().max().unwrap_or(0)
    }

    /// The `k` most similar vectors with cosine similarity of at least `min_similarity`,
    /// best first, as `(id, similarity)`.
    pub fn top_k(&self, query: &[f32], k: usize, min_similarity: f32) -> Vec<(i64, f32)> {
        if query.len() != self.dims || k == 0 || self.dims == 0 {
            return Vec::new();
        }
        let mut best: Vec<(i64, f32)> = Vec::with_capacity(k + 1);
        for (i, row) in self.data.chunks_exact(self.dims).enumerate() {
            let sim: f32 = row.iter().zip(query).map(|(a, b)| a * b).sum();
            if sim < min_similarity {
                continue;
            }
            if best.len() == k && best.last().is_some_and(|l| l.1 >= sim) {
                continue;
            }
            let at = best.partition_point(|b| b.1 >= sim);
            best.insert(at, (self.ids[i], sim));
            best.truncate(k);
        }
        best
    }
}

/// One entry of a fused ranking.
#[derive(Debug, Clone, PartialEq)]
pub struct Fused {
    /// Entry id.
    pub id: i64,
    /// Reciprocal-rank-fusion score (higher is better).
    pub score: f64,
    /// `text`, `vector`, or both, in that order.
    pub matched_by: Vec<&'static str>,
}

/// Reciprocal-rank fusion of a full-text ranking (ids, best first) and a vector ranking:
/// each list adds `1 / (RRF_K + rank)` for the entries it holds. Returns the best `limit`.
pub fn fuse(text: &[i64], vector: &[(i64, f32)], limit: usize) -> Vec<Fused> {
    let mut out: Vec<Fused> = Vec::new();
    let mut add = |id: i64, rank: usize, by: &'static str| {
        let score = 1.0 / (RRF_K + rank as f64 + 1.0);
        match out.iter_mut().find(|f| f.id == id) {
            Some(f) => {
                f.score += score;
                f.matched_by.push(by);
            }
            None => out.push(Fused {
                id,
                score,
                matched_by: vec![by],
            }),
        }
    };
    for (rank, id) in text.iter().enumerate() {
        add(*id, rank, "text");
    }
    for (rank, (id, _)) in vector.iter().enumerate() {
        add(*id, rank, "vector");
    }
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
    out.truncate(limit);
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn top_k_keeps_the_most_similar_above_the_floor_in_order() {
        let mut index = VectorIndex::new(2);
        for (id, v) in [
            (1, [1.0, 0.0]),
            (2, [0.6, 0.8]),
            (3, [0.0, 1.0]),
            (4, [0.8, 0.6]),
        ] {
            index.push(id, &v).unwrap();
        }
        assert_eq!(index.top_k(&[1.0, 0.0], 2, 0.0), vec![(1, 1.0), (4, 0.8)]);
        assert_eq!(index.top_k(&[1.0, 0.0], 10, 0.7).len(), 2);
        assert!(index.push(5, &[1.0]).is_err());
    }

    #[test]
    fn pushing_an_id_again_replaces_its_vector_instead_of_adding_a_second() {
        let mut index = VectorIndex::new(2);
        index.push(7, &[1.0, 0.0]).unwrap();
        index.push(3, &[0.0, 1.0]).unwrap();
        index.push(7, &[0.0, 1.0]).unwrap();
        assert_eq!(index.len(), 2);
        assert_eq!(index.last_id(), 7);
        assert_eq!(index.top_k(&[0.0, 1.0], 10, 0.5), vec![(7, 1.0), (3, 1.0)]);
        assert_eq!(index.top_k(&[1.0, 0.0], 10, 0.5), vec![]);
    }

    #[test]
    fn an_entry_found_by_both_searches_outranks_one_found_by_either() {
        let fused = fuse(&[10, 20], &[(30, 0.9), (20, 0.8)], 10);
        assert_eq!(
            fused.iter().map(|f| f.id).collect::<Vec<_>>(),
            vec![20, 10, 30]
        );
    }
}
