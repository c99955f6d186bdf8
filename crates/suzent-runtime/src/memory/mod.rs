//! The memory service: long-term memory (core blocks in the system prompt, the hybrid archival
//! search fusing SQLite FTS5 with vector similarity), where vectors come from (`embedder.rs`),
//! the backfill of older entries (`backfill.rs`), and end-of-chat summaries (`summaries.rs`).

mod backfill;
mod embedder;
mod summaries;

pub(crate) use summaries::SummaryService;

use crate::chats::whoami;
use crate::dirs::Paths;
use crate::error::RuntimeError;
use crate::settings::SettingsService;
use async_trait::async_trait;
use backfill::run_backfill;
use embedder::{ProviderEmbedder, load_embedder, local_model_name, model_present, no_model_reason};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use suzent_memory::{Embedder, MemoryError, VectorIndex, fuse};
use suzent_store::{MEMORY_BLOCKS, NewArchival, Store};
use suzent_tools::{BlockOperation, MemoryHit, MemoryHost, MemorySearchResult};

/// Longest content of one core memory block, in characters.
pub const MAX_BLOCK_CHARS: usize = 2000;
/// Environment variable naming the embedding model folder (all-MiniLM-L6-v2 files).
pub const EMBEDDING_MODEL_ENV: &str = "SUZENT_EMBEDDING_MODEL";
/// Where [`crate::Runtime::download_embedding_model`] fetches the model files by default.
pub const DEFAULT_MODEL_SOURCE: &str =
    "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/main";
/// Largest model file downloaded.
const MAX_MODEL_FILE_BYTES: u64 = 512 * 1024 * 1024;
/// Setting naming the provider embedding model (`openai/text-embedding-3-small`); when set, it
/// replaces the local model.
const EMBEDDING_PROVIDER_KEY: &str = "memory.embedding_model";
/// Lowest cosine similarity a vector hit needs to count.
const MIN_SIMILARITY: f32 = 0.3;
/// Candidates each search contributes before fusion.
const CANDIDATES: usize = 50;

/// The embedder, loaded at first use: `Ok` or why there is none.
type EmbedderSlot = Option<Result<Arc<dyn Embedder>, String>>;

/// Per user: the vector index, loaded from the store once and then incrementally (new rows by
/// id; older rows that the backfill embeds are pushed into it by the backfill).
type Indexes = Arc<tokio::sync::Mutex<HashMap<String, VectorIndex>>>;

/// The background embedding of entries stored without a vector (see `backfill.rs`).
#[derive(Debug, Default)]
struct Backfill {
    /// Whether the backfill was started for the current embedder (reset with it).
    started: bool,
    /// The running task, if any.
    task: Option<tokio::task::JoinHandle<()>>,
}

/// Long-term memory: core blocks and the hybrid archive search, the embedding source (local
/// model or a provider's), the model download and the backfill.
pub(crate) struct MemoryService {
    store: Store,
    settings: Arc<SettingsService>,
    model_dir: PathBuf,
    embedder: Mutex<EmbedderSlot>,
    indexes: Indexes,
    backfill: Mutex<Backfill>,
    /// One model download at a time (a second one waits and then finds the files in place).
    download: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for MemoryService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryService")
            .field("model_dir", &self.model_dir)
            .finish_non_exhaustive()
    }
}

impl MemoryService {
    /// The service; the local model's folder is `SUZENT_EMBEDDING_MODEL` or
    /// `models/all-MiniLM-L6-v2` under the data directory.
    pub(crate) fn new(
        paths: &Paths,
        store: Store,
        settings: Arc<SettingsService>,
    ) -> MemoryService {
        let model_dir = std::env::var_os(EMBEDDING_MODEL_ENV)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| paths.data_dir.join("models").join("all-MiniLM-L6-v2"));
        MemoryService {
            store,
            settings,
            model_dir,
            embedder: Mutex::new(None),
            indexes: Arc::new(tokio::sync::Mutex::new(HashMap::new())),
            backfill: Mutex::new(Backfill::default()),
            download: tokio::sync::Mutex::new(()),
        }
    }

    /// The embedder, or why there is none (said plainly to the model). The first time an
    /// embedder is available, the entries stored without a vector start being embedded in the
    /// background.
    async fn embedder(&self) -> Result<Arc<dyn Embedder>, String> {
        let slot = self
            .embedder
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let loaded = match slot {
            Some(slot) => slot,
            None => {
                let dir = self.model_dir.clone();
                let loaded = tokio::task::spawn_blocking(move || load_embedder(&dir))
                    .await
                    .map_err(|e| format!("the embedding model task failed: {e}"))
                    .and_then(|r| r);
                if let Err(e) = &loaded {
                    tracing::info!("memory search uses full-text only: {e}");
                }
                *self.embedder.lock().unwrap_or_else(PoisonError::into_inner) =
                    Some(loaded.clone());
                loaded
            }
        };
        if let Ok(embedder) = &loaded {
            self.start_backfill(embedder);
        }
        loaded
    }

    /// Starts embedding the entries without a vector from `embedder` in the background, once
    /// per embedder (a search never waits for it; it uses what is indexed so far).
    fn start_backfill(&self, embedder: &Arc<dyn Embedder>) {
        let mut backfill = self.backfill.lock().unwrap_or_else(PoisonError::into_inner);
        // Not for an embedder replaced meanwhile (a download or another provider).
        let current = matches!(
            &*self.embedder.lock().unwrap_or_else(PoisonError::into_inner),
            Some(Ok(e)) if Arc::ptr_eq(e, embedder)
        );
        if backfill.started || !current {
            return;
        }
        backfill.started = true;
        backfill.task = Some(tokio::spawn(run_backfill(
            self.store.clone(),
            Arc::clone(embedder),
            Arc::clone(&self.indexes),
        )));
    }

    /// Forgets the embedder (it is chosen or loaded again at next use) and stops a backfill
    /// that uses it.
    async fn reset_embedder(&self) {
        *self.embedder.lock().unwrap_or_else(PoisonError::into_inner) = None;
        let task = {
            let mut backfill = self.backfill.lock().unwrap_or_else(PoisonError::into_inner);
            backfill.started = false;
            backfill.task.take()
        };
        if let Some(task) = task {
            task.abort();
        }
        self.indexes.lock().await.clear();
    }

    /// Whether the backfill is embedding entries now.
    fn backfilling(&self) -> bool {
        self.backfill
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .task
            .as_ref()
            .is_some_and(|t| !t.is_finished())
    }

    async fn embed(&self, embedder: Arc<dyn Embedder>, text: &str) -> Result<Vec<f32>, String> {
        let text = text.to_string();
        tokio::task::spawn_blocking(move || embedder.embed(&[&text]))
            .await
            .map_err(|e| format!("the embedding task failed: {e}"))?
            .map_err(|e| e.to_string())?
            .pop()
            .ok_or_else(|| "the embedder returned no vector".to_string())
    }

    /// The embeddings of `texts` for storing them, or `None` each when there is no embedder.
    pub(crate) async fn embeddings(
        &self,
        texts: &[String],
    ) -> Result<Vec<Option<Vec<f32>>>, String> {
        Ok(match self.embedder().await {
            Ok(embedder) => {
                let texts = texts.to_vec();
                let vectors = tokio::task::spawn_blocking(move || {
                    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                    embedder.embed(&refs)
                })
                .await
                .map_err(|e| format!("the embedding task failed: {e}"))?
                .map_err(|e: MemoryError| e.to_string())?;
                vectors.into_iter().map(Some).collect()
            }
            Err(_) => vec![None; texts.len()],
        })
    }

    /// Stores entries (embedding them when a model is available); returns their ids.
    pub(crate) async fn archive_many(
        &self,
        user_id: &str,
        chat_id: Option<&str>,
        source: &str,
        texts: &[String],
    ) -> Result<Vec<i64>, String> {
        let vectors = self.embeddings(texts).await?;
        let entries: Vec<NewArchival> = texts
            .iter()
            .zip(vectors)
            .map(|(t, embedding)| NewArchival {
                user_id: user_id.to_string(),
                chat_id: chat_id.map(str::to_string),
                source: source.to_string(),
                content: t.clone(),
                embedding,
            })
            .collect();
        self.store
            .add_archival(&entries)
            .await
            .map_err(|e| e.to_string())
    }

    /// Brings the user's vector index up to date with the store and searches it.
    async fn vector_search(
        &self,
        user_id: &str,
        dims: usize,
        query: &[f32],
    ) -> Result<Vec<(i64, f32)>, String> {
        let mut indexes = self.indexes.lock().await;
        let index = indexes
            .entry(user_id.to_string())
            .or_insert_with(|| VectorIndex::new(dims));
        let fresh = self
            .store
            .archival_embeddings(user_id, index.last_id())
            .await
            .map_err(|e| e.to_string())?;
        for (id, v) in fresh {
            // Rows from another model (other dimensions) are skipped, not fatal.
            let _ = index.push(id, &v);
        }
        Ok(index.top_k(query, CANDIDATES, MIN_SIMILARITY))
    }
}

#[async_trait]
impl MemoryHost for MemoryService {
    async fn search(
        &self,
        user_id: &str,
        query: &str,
        limit: usize,
    ) -> Result<MemorySearchResult, String> {
        let text_hits = self
            .store
            .search_archival_text(user_id, query, CANDIDATES)
            .await
            .map_err(|e| e.to_string())?;
        let text_ids: Vec<i64> = text_hits.iter().map(|h| h.id).collect();
        let (vector_hits, text_only_reason) = match self.embedder().await {
            Ok(embedder) => {
                let q = self.embed(Arc::clone(&embedder), query).await?;
                (self.vector_search(user_id, q.len(), &q).await?, None)
            }
            Err(reason) => (Vec::new(), Some(reason)),
        };
        let fused = fuse(&text_ids, &vector_hits, limit);
        let ids: Vec<i64> = fused.iter().map(|f| f.id).collect();
        let entries = self
            .store
            .archival_entries(&ids)
            .await
            .map_err(|e| e.to_string())?;
        let hits = fused
            .into_iter()
            .filter_map(|f| {
                let e = entries.iter().find(|e| e.id == f.id)?;
                Some(MemoryHit {
                    id: f.id,
                    content: e.content.clone(),
                    created_at: e.created_at.to_rfc3339(),
                    score: f.score,
                    matched_by: f.matched_by,
                })
            })
            .collect();
        Ok(MemorySearchResult {
            hits,
            text_only_reason,
        })
    }

    async fn update_block(
        &self,
        user_id: &str,
        block: &str,
        operation: BlockOperation,
        content: &str,
    ) -> Result<String, String> {
        if !MEMORY_BLOCKS.contains(&block) {
            return Err(format!(
                "unknown block '{block}'; the blocks are {}",
                MEMORY_BLOCKS.join(", ")
            ));
        }
        let current = self
            .store
            .memory_blocks(user_id)
            .await
            .map_err(|e| e.to_string())?
            .into_iter()
            .find(|(b, _)| b == block)
            .map(|(_, c)| c)
            .unwrap_or_default();
        let new = match operation {
            BlockOperation::Replace => content.trim().to_string(),
            BlockOperation::Append if current.is_empty() => content.trim().to_string(),
            BlockOperation::Append => format!("{current}\n{}", content.trim()),
            BlockOperation::Clear => String::new(),
        };
        let chars = new.chars().count();
        if chars > MAX_BLOCK_CHARS {
            return Err(format!(
                "block '{block}' would hold {chars} characters; the limit is {MAX_BLOCK_CHARS}: \
                 shorten it (replace it with a summary) or archive details with memory_archive"
            ));
        }
        self.store
            .set_memory_block(user_id, block, &new)
            .await
            .map_err(|e| e.to_string())?;
        Ok(new)
    }

    async fn archive(&self, user_id: &str, chat_id: &str, content: &str) -> Result<i64, String> {
        let ids = self
            .archive_many(user_id, Some(chat_id), "tool", &[content.to_string()])
            .await?;
        ids.first()
            .copied()
            .ok_or_else(|| "the entry was not stored".to_string())
    }
}

impl MemoryService {
    /// Downloads the model files into the model folder unless they are all there; returns the
    /// folder and whether anything was downloaded. Files are written to a temporary folder,
    /// checked by loading the model, then each is renamed into place (replacing only a file of
    /// the same name), so a failed download leaves nothing half-written and nothing else in the
    /// folder — which `SUZENT_EMBEDDING_MODEL` may point at — is touched.
    async fn download_model(&self, source: &str) -> Result<(PathBuf, bool), String> {
        let dir = self.model_dir.clone();
        let _one_at_a_time = self.download.lock().await;
        if model_present(&dir) {
            return Ok((dir, false));
        }
        let parent = dir
            .parent()
            .ok_or_else(|| format!("the model folder {} has no parent", dir.display()))?;
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        let staging =
            tempfile::tempdir_in(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        let client = reqwest::Client::builder()
            .connect_timeout(std::time::Duration::from_secs(20))
            .build()
            .map_err(|e| e.to_string())?;
        for file in suzent_memory::MODEL_FILES {
            let url = format!("{}/{file}", source.trim_end_matches('/'));
            let mut response = client
                .get(&url)
                .send()
                .await
                .and_then(|r| r.error_for_status())
                .map_err(|e| format!("downloading {url} failed: {e}"))?;
            let mut bytes = Vec::new();
            while let Some(chunk) = response
                .chunk()
                .await
                .map_err(|e| format!("downloading {url} failed: {e}"))?
            {
                bytes.extend_from_slice(&chunk);
                if bytes.len() as u64 > MAX_MODEL_FILE_BYTES {
                    return Err(format!("{url} is larger than {MAX_MODEL_FILE_BYTES} bytes"));
                }
            }
            std::fs::write(staging.path().join(file), &bytes)
                .map_err(|e| format!("writing {file}: {e}"))?;
        }
        let check = staging.path().to_path_buf();
        tokio::task::spawn_blocking(move || suzent_memory::MiniLmEmbedder::load(&check))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| format!("the downloaded files are not a usable model: {e}"))?;
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for file in suzent_memory::MODEL_FILES {
            let (from, to) = (staging.path().join(file), dir.join(file));
            // The staging folder is beside the model folder; a folder on another file system
            // (a symlink) gets a copy instead.
            if std::fs::rename(&from, &to).is_err() {
                std::fs::copy(&from, &to).map_err(|e| format!("{}: {e}", to.display()))?;
            }
        }
        // The next use loads the new model.
        self.reset_embedder().await;
        Ok((dir, true))
    }
}

/// Whether memory search compares meanings (see [`crate::Runtime::embedding_status`]).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddingStatus {
    /// Whether search finds memories by meaning (vector similarity) besides exact words.
    pub active: bool,
    /// The embedding model, `all-MiniLM-L6-v2 (local)` or
    /// `openai/text-embedding-3-small (provider)`; `None` when search is full-text only.
    pub model: Option<String>,
    /// Why search is full-text only (`None` when it is not).
    pub reason: Option<String>,
    /// Whether a provider's embedding model is chosen instead of the local one.
    pub provider: bool,
    /// The local model's folder (where a download puts the files).
    pub model_dir: String,
    /// Whether that folder holds all the local model files.
    pub model_present: bool,
    /// How many of the local user's memories have no vector from the current model yet
    /// (stored before a model existed, or by another model); with no model, how many have
    /// none at all.
    pub entries_without_vector: u32,
    /// Whether those are being embedded in the background now.
    pub backfilling: bool,
}

impl MemoryService {
    /// Uses a provider's embedding model (`openai/text-embedding-3-small`; OpenAI-compatible
    /// `/embeddings` endpoints: `openai/...` with its base URL and key, `ollama/...`) for
    /// archival memory instead of the local model, or the local model again with `None`. The
    /// choice is stored. Vectors of entries stored with another model are not compared.
    pub(crate) async fn set_embedding_provider(
        &self,
        model: Option<&str>,
    ) -> Result<(), RuntimeError> {
        if let Some(model) = model {
            self.provider_embedder(model)?;
        }
        let value = match model {
            Some(m) => serde_json::json!(m),
            None => serde_json::Value::Null,
        };
        self.store
            .set_setting(EMBEDDING_PROVIDER_KEY, &value)
            .await?;
        self.reset_embedder().await;
        Ok(())
    }

    fn provider_embedder(&self, model: &str) -> Result<Arc<dyn Embedder>, RuntimeError> {
        use crate::provider::ProviderKind;
        let (kind, model_id) = crate::provider::resolve::parse_model(model)?;
        if !matches!(kind, ProviderKind::OpenAi | ProviderKind::Ollama) {
            return Err(RuntimeError::InvalidInput {
                field: "embedding_model".into(),
                message: format!(
                    "'{model}': embeddings come from OpenAI-compatible endpoints (openai/..., ollama/...)"
                ),
            });
        }
        let key = self.settings.keys().api_key(kind.as_str());
        if kind == ProviderKind::OpenAi && key.is_none() {
            return Err(RuntimeError::InvalidInput {
                field: "embedding_model".into(),
                message: "no OpenAI key: set OPENAI_API_KEY or run `suzent keys set openai`".into(),
            });
        }
        let base = crate::provider::resolve::base_url(kind, &self.settings.config().providers);
        Ok(Arc::new(ProviderEmbedder {
            handle: tokio::runtime::Handle::current(),
            client: crate::provider::resolve::shared_client()?,
            url: format!("{base}/embeddings"),
            key,
            model: model_id,
            name: format!("{model} (provider)"),
            dims: std::sync::atomic::AtomicUsize::new(0),
        }))
    }

    /// Chooses the embedding source when none is chosen yet: the stored provider model if any
    /// (else the local model, loaded at first use).
    async fn choose_embedder(&self) -> Result<(), RuntimeError> {
        let memory = self;
        let unset = memory
            .embedder
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_none();
        if unset
            && let Some(serde_json::Value::String(model)) =
                self.store.get_setting(EMBEDDING_PROVIDER_KEY).await?
        {
            let chosen = self.provider_embedder(&model).map_err(|e| e.to_string());
            *memory
                .embedder
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(chosen);
        }
        Ok(())
    }

    /// The memory a tool context gets (`memory_search`, `memory_block_update`,
    /// `memory_archive`), with its embedding source chosen.
    pub(crate) async fn host(self: &Arc<Self>) -> Result<Arc<dyn MemoryHost>, RuntimeError> {
        self.choose_embedder().await?;
        Ok(Arc::clone(self) as Arc<dyn MemoryHost>)
    }

    /// The core memory blocks of `user_id` for the system prompt, or `None` when all are empty.
    pub(crate) async fn prompt_section(
        &self,
        user_id: &str,
    ) -> Result<Option<String>, RuntimeError> {
        let blocks = self.store.memory_blocks(user_id).await?;
        let blocks: Vec<_> = blocks.into_iter().filter(|(_, c)| !c.is_empty()).collect();
        if blocks.is_empty() {
            return Ok(None);
        }
        let mut section = String::from(
            "\n\nCore memory (keep it current with memory_block_update; search older \
             memories with memory_search):",
        );
        for (block, content) in blocks {
            section.push_str(&format!("\n<{block}>\n{content}\n</{block}>"));
        }
        Ok(Some(section))
    }

    /// Downloads the local embedding model (all-MiniLM-L6-v2) once into the data folder (or the
    /// folder named by `SUZENT_EMBEDDING_MODEL`) from `source` (default
    /// [`DEFAULT_MODEL_SOURCE`]). Returns the folder and whether anything was downloaded; files
    /// already in place are kept. Then loads the embedding model in use (this one unless a
    /// provider's is chosen) and starts embedding, in the background, the memories stored
    /// without a vector ([`crate::Runtime::embedding_status`] tells how many are left).
    pub(crate) async fn download_embedding_model(
        &self,
        source: Option<&str>,
    ) -> Result<(PathBuf, bool), RuntimeError> {
        self.choose_embedder().await?;
        let downloaded = self
            .download_model(source.unwrap_or(DEFAULT_MODEL_SOURCE))
            .await
            .map_err(|message| RuntimeError::InvalidInput {
                field: "model".into(),
                message,
            })?;
        // Loads the model (or the chosen provider's) and starts the backfill; a failure is
        // reported by the status and by the next search.
        self.choose_embedder().await?;
        let _ = self.embedder().await;
        Ok(downloaded)
    }

    /// Whether memory search compares meanings, with which model, or why not; and how many of
    /// the local user's memories still wait for a vector. Cheap: it loads no model (an unused
    /// local model counts as on when its files are in place) and calls no provider.
    pub(crate) async fn embedding_status(&self) -> Result<EmbeddingStatus, RuntimeError> {
        self.choose_embedder().await?;
        let memory = self;
        let provider = matches!(
            self.store.get_setting(EMBEDDING_PROVIDER_KEY).await?,
            Some(serde_json::Value::String(_))
        );
        let present = model_present(&memory.model_dir);
        let slot = memory
            .embedder
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let (model, reason, dims) = match slot {
            Some(Ok(embedder)) => (Some(embedder.name().to_string()), None, embedder.dims()),
            Some(Err(reason)) => (None, Some(reason), 0),
            None if present => (
                Some(local_model_name(&memory.model_dir)),
                None,
                suzent_memory::MINILM_DIMS,
            ),
            None => (None, Some(no_model_reason(&memory.model_dir)), 0),
        };
        let waiting = self
            .store
            .archival_needing_embedding_count(&whoami(), dims)
            .await?;
        Ok(EmbeddingStatus {
            active: model.is_some(),
            model,
            reason,
            provider,
            model_dir: memory.model_dir.display().to_string(),
            model_present: present,
            entries_without_vector: u32::try_from(waiting).unwrap_or(u32::MAX),
            backfilling: memory.backfilling(),
        })
    }

    /// Starts embedding the memories stored without a vector when there are any and an
    /// embedding model is at hand (the local files in place, or a provider's model chosen);
    /// otherwise loads nothing. Called when the dispatcher starts (the app, `suzent serve`).
    pub(crate) fn start_backfill_if_due(self: &Arc<Self>) {
        let memory = Arc::clone(self);
        tokio::spawn(async move {
            if let Err(e) = memory.choose_embedder().await {
                tracing::warn!("cannot check the memories without a vector: {e}");
                return;
            }
            let chosen = memory
                .embedder
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_some();
            if !chosen && !model_present(&memory.model_dir) {
                return;
            }
            match memory.store.archival_needing_embedding(0, 0, 1).await {
                Ok(waiting) if !waiting.is_empty() => {
                    let _ = memory.embedder().await;
                }
                Ok(_) => {}
                Err(e) => tracing::warn!("cannot check the memories without a vector: {e}"),
            }
        });
    }

    /// The embeddings of `texts` for storing them (`None` each without an embedding model),
    /// with the embedding source chosen first.
    pub(crate) async fn embeddings_for_storage(
        &self,
        texts: &[String],
    ) -> Result<Vec<Option<Vec<f32>>>, RuntimeError> {
        self.choose_embedder().await?;
        self.embeddings(texts)
            .await
            .map_err(|message| RuntimeError::InvalidInput {
                field: "memory".into(),
                message,
            })
    }

    /// The local user's core memory blocks that have content, as `(block, content)`.
    pub(crate) async fn memory_blocks(&self) -> Result<Vec<(String, String)>, RuntimeError> {
        Ok(self.store.memory_blocks(&whoami()).await?)
    }

    /// Sets a core memory block of the local user (the desktop app's editor).
    pub(crate) async fn set_memory_block(
        &self,
        block: &str,
        content: &str,
    ) -> Result<String, RuntimeError> {
        self.update_block(&whoami(), block, BlockOperation::Replace, content)
            .await
            .map_err(|message| RuntimeError::InvalidInput {
                field: "block".into(),
                message,
            })
    }

    /// Stores archival memories of the local user (imports, end-of-chat summaries); embeds them
    /// when a model is available. Returns their ids.
    pub(crate) async fn archive_memories(
        &self,
        chat_id: Option<&str>,
        source: &str,
        texts: &[String],
    ) -> Result<Vec<i64>, RuntimeError> {
        self.choose_embedder().await?;
        self.archive_many(&whoami(), chat_id, source, texts)
            .await
            .map_err(|message| RuntimeError::InvalidInput {
                field: "memory".into(),
                message,
            })
    }

    /// Hybrid search of the local user's archival memory (what `memory_search` does): at most
    /// `limit` hits, best first.
    ///
    /// Errors: [`RuntimeError::InvalidInput`] with field `query` (empty, or the search failed)
    /// or `limit` (outside 1..=[`suzent_tools::MAX_MEMORY_RESULTS`]).
    pub(crate) async fn search_memory(
        &self,
        query: &str,
        limit: usize,
    ) -> Result<MemorySearchResult, RuntimeError> {
        let query = query.trim();
        if query.is_empty() {
            return Err(RuntimeError::InvalidInput {
                field: "query".into(),
                message: "enter the words to search for".into(),
            });
        }
        if !(1..=suzent_tools::MAX_MEMORY_RESULTS).contains(&limit) {
            return Err(RuntimeError::InvalidInput {
                field: "limit".into(),
                message: format!(
                    "{limit} is outside 1..={}",
                    suzent_tools::MAX_MEMORY_RESULTS
                ),
            });
        }
        self.choose_embedder().await?;
        self.search(&whoami(), query, limit)
            .await
            .map_err(|message| RuntimeError::InvalidInput {
                field: "query".into(),
                message,
            })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::test_services::TestServices;
    use pretty_assertions::assert_eq;
    use suzent_core::Config;

    fn invalid_field(e: &RuntimeError) -> Option<&str> {
        match e {
            RuntimeError::InvalidInput { field, .. } => Some(field),
            _ => None,
        }
    }

    #[tokio::test]
    async fn a_core_block_set_by_the_user_is_stored_and_shown_in_the_system_prompt()
    -> anyhow::Result<()> {
        let s = TestServices::open(Config::default()).await;
        let memory = s.memory();
        assert_eq!(memory.prompt_section(&whoami()).await?, None);
        let stored = memory
            .set_memory_block("user", "  Prefers short answers.  ")
            .await?;
        assert_eq!(stored, "Prefers short answers.");
        assert_eq!(
            memory.memory_blocks().await?,
            vec![("user".to_string(), "Prefers short answers.".to_string())]
        );
        assert_eq!(
            memory.prompt_section(&whoami()).await?,
            Some(
                "\n\nCore memory (keep it current with memory_block_update; search older \
                 memories with memory_search):\n<user>\nPrefers short answers.\n</user>"
                    .to_string()
            )
        );
        let err = memory.set_memory_block("secrets", "x").await.unwrap_err();
        assert_eq!(invalid_field(&err), Some("block"), "{err}");
        Ok(())
    }

    #[tokio::test]
    async fn an_archived_memory_is_found_by_full_text_without_an_embedding_model()
    -> anyhow::Result<()> {
        let s = TestServices::open(Config::default()).await;
        let memory = s.memory();
        let ids = memory
            .archive_memories(
                None,
                "import",
                &[
                    "The deploy key lives in the vault under prod".to_string(),
                    "Lunch is at noon on Fridays".to_string(),
                ],
            )
            .await?;
        let found = memory.search_memory("deploy vault", 5).await?;
        assert_eq!(
            found
                .hits
                .iter()
                .map(|h| (h.id, h.content.as_str(), h.matched_by.clone()))
                .collect::<Vec<_>>(),
            vec![(
                ids[0],
                "The deploy key lives in the vault under prod",
                vec!["text"]
            )]
        );
        assert_eq!(
            found.text_only_reason,
            Some(no_model_reason(
                &s.paths.data_dir.join("models").join("all-MiniLM-L6-v2")
            ))
        );
        Ok(())
    }

    #[tokio::test]
    async fn an_empty_query_or_a_limit_out_of_range_is_refused() -> anyhow::Result<()> {
        let s = TestServices::open(Config::default()).await;
        let memory = s.memory();
        let empty = memory.search_memory("   ", 5).await.unwrap_err();
        let zero = memory.search_memory("deploy", 0).await.unwrap_err();
        let many = memory
            .search_memory("deploy", suzent_tools::MAX_MEMORY_RESULTS + 1)
            .await
            .unwrap_err();
        assert_eq!(
            (
                invalid_field(&empty),
                invalid_field(&zero),
                invalid_field(&many)
            ),
            (Some("query"), Some("limit"), Some("limit"))
        );
        Ok(())
    }

    #[tokio::test]
    async fn without_a_model_the_status_says_why_and_counts_the_memories_waiting_for_a_vector()
    -> anyhow::Result<()> {
        let s = TestServices::open(Config::default()).await;
        let memory = s.memory();
        memory
            .archive_memories(None, "import", &["one".to_string(), "two".to_string()])
            .await?;
        let dir = s.paths.data_dir.join("models").join("all-MiniLM-L6-v2");
        assert_eq!(
            memory.embedding_status().await?,
            EmbeddingStatus {
                active: false,
                model: None,
                reason: Some(no_model_reason(&dir)),
                provider: false,
                model_dir: dir.display().to_string(),
                model_present: false,
                entries_without_vector: 2,
                backfilling: false,
            }
        );
        Ok(())
    }

    #[tokio::test]
    async fn an_embedding_provider_that_is_not_openai_compatible_is_refused_and_not_stored()
    -> anyhow::Result<()> {
        let s = TestServices::open(Config::default()).await;
        let memory = s.memory();
        let err = memory
            .set_embedding_provider(Some("anthropic/claude-embed"))
            .await
            .unwrap_err();
        assert_eq!(invalid_field(&err), Some("embedding_model"), "{err}");
        assert_eq!(s.store.get_setting(EMBEDDING_PROVIDER_KEY).await?, None);
        Ok(())
    }
}
