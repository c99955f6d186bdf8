//! Where vectors come from: the local all-MiniLM-L6-v2 model files, or a provider's
//! OpenAI-compatible `/embeddings` endpoint.

use super::EMBEDDING_MODEL_ENV;
use std::sync::Arc;
use suzent_memory::{Embedder, MemoryError};

/// Embeddings from an OpenAI-compatible `/embeddings` endpoint (OpenAI, Ollama, or any server
/// at the configured base URL).
pub(super) struct ProviderEmbedder {
    pub(super) handle: tokio::runtime::Handle,
    pub(super) client: reqwest::Client,
    pub(super) url: String,
    pub(super) key: Option<String>,
    pub(super) model: String,
    pub(super) name: String,
    pub(super) dims: std::sync::atomic::AtomicUsize,
}

impl std::fmt::Debug for ProviderEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderEmbedder")
            .field("url", &self.url)
            .field("model", &self.model)
            .finish()
    }
}

impl Embedder for ProviderEmbedder {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, MemoryError> {
        #[derive(serde::Deserialize)]
        struct Item {
            index: usize,
            embedding: Vec<f32>,
        }
        #[derive(serde::Deserialize)]
        struct Answer {
            data: Vec<Item>,
        }
        let body = serde_json::json!({"model": self.model, "input": texts});
        let mut request = self.client.post(&self.url).json(&body);
        if let Some(key) = &self.key {
            request = request.bearer_auth(key);
        }
        let fail = |e: String| MemoryError::Embed(format!("{}: {e}", self.name));
        // Called on a blocking thread (never inside the async runtime's workers).
        let answer: Answer = self
            .handle
            .block_on(async {
                let response = request.send().await?.error_for_status()?;
                response.json::<Answer>().await
            })
            .map_err(|e| fail(e.to_string()))?;
        let mut items = answer.data;
        items.sort_by_key(|i| i.index);
        if items.len() != texts.len() {
            return Err(fail(format!(
                "{} vectors for {} texts",
                items.len(),
                texts.len()
            )));
        }
        let vectors: Vec<Vec<f32>> = items
            .into_iter()
            .map(|i| {
                let norm = i.embedding.iter().map(|x| x * x).sum::<f32>().sqrt();
                if norm > 0.0 {
                    i.embedding.iter().map(|x| x / norm).collect()
                } else {
                    i.embedding
                }
            })
            .collect();
        if let Some(v) = vectors.first() {
            self.dims
                .store(v.len(), std::sync::atomic::Ordering::Relaxed);
        }
        Ok(vectors)
    }

    fn dims(&self) -> usize {
        self.dims.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn name(&self) -> &str {
        &self.name
    }
}

/// Whether the folder holds every local model file.
pub(super) fn model_present(dir: &std::path::Path) -> bool {
    suzent_memory::MODEL_FILES
        .iter()
        .all(|f| dir.join(f).is_file())
}

/// Why there is no local model: the folder lacks the files.
pub(super) fn no_model_reason(dir: &std::path::Path) -> String {
    format!(
        "no embedding model at {} (put the all-MiniLM-L6-v2 files model.safetensors, \
         tokenizer.json and config.json there, or set {EMBEDDING_MODEL_ENV})",
        dir.display()
    )
}

/// The name the local embedder has once loaded from `dir` (`all-MiniLM-L6-v2 (local)`).
pub(super) fn local_model_name(dir: &std::path::Path) -> String {
    format!(
        "{} (local)",
        dir.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "sentence model".into())
    )
}

pub(super) fn load_embedder(dir: &std::path::Path) -> Result<Arc<dyn Embedder>, String> {
    if !dir.is_dir() {
        return Err(no_model_reason(dir));
    }
    suzent_memory::MiniLmEmbedder::load(dir)
        .map(|e| Arc::new(e) as Arc<dyn Embedder>)
        .map_err(|e| e.to_string())
}
