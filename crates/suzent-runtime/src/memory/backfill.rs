//! The background embedding of archival memories stored without a vector (before a model
//! existed, or by another model), [`BACKFILL_BATCH`] at a time; searches meanwhile use what is
//! already embedded.

use super::Indexes;
use std::sync::Arc;
use suzent_memory::Embedder;
use suzent_store::Store;

/// Entries embedded per step of the background backfill (one model call, one transaction).
const BACKFILL_BATCH: usize = 64;

/// Embeds the entries of every user that have no vector (or one of another length, from another
/// model) with `embedder`, [`BACKFILL_BATCH`] at a time in id order, stores the vectors and
/// puts them into the loaded vector indexes. Stops at the first failure (logged); the next
/// embedder (or the next start of the app) tries again.
pub(super) async fn run_backfill(store: Store, embedder: Arc<dyn Embedder>, indexes: Indexes) {
    let started = std::time::Instant::now();
    // 0 until a provider's first answer: then only entries without any vector are selected.
    let mut dims = embedder.dims();
    let mut after_id = 0;
    let mut done = 0usize;
    loop {
        let batch = match store
            .archival_needing_embedding(dims, after_id, BACKFILL_BATCH)
            .await
        {
            Ok(batch) => batch,
            Err(e) => {
                tracing::warn!("embedding older memories stopped: {e}");
                return;
            }
        };
        let Some(last_id) = batch.last().map(|e| e.id) else {
            break;
        };
        let texts: Vec<String> = batch.iter().map(|e| e.content.clone()).collect();
        let model = Arc::clone(&embedder);
        let vectors = match tokio::task::spawn_blocking(move || {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            model.embed(&refs)
        })
        .await
        {
            Ok(Ok(v)) if v.len() == batch.len() => v,
            Ok(Ok(v)) => {
                tracing::warn!(
                    "embedding older memories stopped: {} vectors for {} texts",
                    v.len(),
                    batch.len()
                );
                return;
            }
            Ok(Err(e)) => {
                tracing::warn!("embedding older memories stopped: {e}");
                return;
            }
            Err(e) => {
                tracing::warn!("embedding older memories stopped: the task failed: {e}");
                return;
            }
        };
        let dims_were_known = dims != 0;
        dims = vectors.first().map_or(dims, Vec::len);
        let pairs: Vec<(i64, Vec<f32>)> = batch.iter().map(|e| e.id).zip(vectors).collect();
        let updated = match store.set_archival_embeddings(&pairs).await {
            Ok(updated) => updated,
            Err(e) => {
                tracing::warn!("embedding older memories stopped: {e}");
                return;
            }
        };
        {
            let mut indexes = indexes.lock().await;
            for ((id, vector), entry) in pairs.iter().zip(&batch) {
                if updated.contains(id)
                    && let Some(index) = indexes.get_mut(&entry.user_id)
                {
                    // An index of another length belongs to another model: not its vector.
                    let _ = index.push(*id, vector);
                }
            }
        }
        done += updated.len();
        // Once the length is known, entries before this batch may hold vectors of another
        // length: look at them again from the start.
        after_id = if dims_were_known { last_id } else { 0 };
        tokio::task::yield_now().await;
    }
    if done > 0 {
        let secs = started.elapsed().as_secs_f64();
        tracing::info!(
            entries = done,
            seconds = secs,
            per_second = done as f64 / secs.max(1e-9),
            model = embedder.name(),
            "embedded the archival memories stored without a vector"
        );
    }
}
