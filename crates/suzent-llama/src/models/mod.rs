//! The model manager: GGUF files in one folder under the data directory (`models/gguf`), a short
//! list of recommended models, downloads with progress, resume and a SHA-256 check, imports from
//! disk, listing and removal.
//!
//! Nothing here reaches the network unless asked to pull: listing, importing and removing are
//! local. A download is written to `.partial/FILE.part` first and resumed from there (an HTTP
//! `Range` request) when the connection drops, retried a few times; the finished file's SHA-256
//! must equal the pinned checksum or, for the hub's files, the one the hub publishes
//! (`X-Linked-Etag`, as Hugging Face serves LFS files) — otherwise the partial file is removed and
//! the download is refused. Only a file whose GGUF head reads is moved into place.

mod gguf;

pub use gguf::{GgufError, GgufInfo, read_gguf_info};

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::AsyncWriteExt;

/// The default hub: Hugging Face (`{hub}/{repo}/resolve/main/{file}`).
pub const DEFAULT_HUB_URL: &str = "https://huggingface.co";

/// A model Suzent recommends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct RecommendedModel {
    /// Id and file stem (`qwen2.5-coder-1.5b-instruct-q4_k_m`); the model string is `local/ID`.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Path on the hub: `{repo}/resolve/main/{file}`.
    pub hub_path: String,
    /// Approximate download size in bytes (the server's length is used while downloading).
    pub size_bytes: u64,
    /// The file's SHA-256, when pinned; otherwise the hub's published checksum is required.
    pub sha256: Option<String>,
    /// Licence.
    pub license: String,
    /// What it is good at, and its limits.
    pub purpose: String,
    /// Memory it needs to run well, in GiB.
    pub min_ram_gb: u32,
}

/// The recommended models: a small one for any machine and coder models for larger ones.
pub fn recommended_models() -> Vec<RecommendedModel> {
    let entry = |id: &str, name: &str, hub_path: &str, size_mb: u64, purpose: &str, ram: u32| {
        RecommendedModel {
            id: id.into(),
            name: name.into(),
            hub_path: hub_path.into(),
            size_bytes: size_mb * 1_000_000,
            sha256: None,
            license: "Apache-2.0".into(),
            purpose: purpose.into(),
            min_ram_gb: ram,
        }
    };
    vec![
        entry(
            "qwen2.5-0.5b-instruct-q4_k_m",
            "Qwen2.5 0.5B Instruct (Q4_K_M)",
            "Qwen/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/qwen2.5-0.5b-instruct-q4_k_m.gguf",
            491,
            "Runs on any machine: quick questions and single file look-ups; weak at long multi-step tasks.",
            2,
        ),
        entry(
            "qwen2.5-coder-1.5b-instruct-q4_k_m",
            "Qwen2.5 Coder 1.5B Instruct (Q4_K_M)",
            "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/resolve/main/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            1_120,
            "Coding help on an 8 GB laptop: reads, searches and small edits.",
            8,
        ),
        entry(
            "qwen2.5-coder-7b-instruct-q4_k_m",
            "Qwen2.5 Coder 7B Instruct (Q4_K_M)",
            "bartowski/Qwen2.5-Coder-7B-Instruct-GGUF/resolve/main/Qwen2.5-Coder-7B-Instruct-Q4_K_M.gguf",
            4_680,
            "The larger coder model for 16 GB machines: better tool use and multi-step work.",
            16,
        ),
    ]
}

/// A model in the models folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct InstalledModel {
    /// Id: the file name without `.gguf`; the model string is `local/ID`.
    pub id: String,
    /// Where the file is.
    pub path: String,
    /// Size in bytes.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub size_bytes: u64,
    /// SHA-256 checked or computed when it was added (none for a file copied in by hand).
    pub sha256: Option<String>,
    /// Where it came from: `recommended:ID`, a URL, `import:PATH`, or `folder` (copied in by hand).
    pub source: String,
    /// `general.architecture` of the GGUF.
    pub architecture: String,
    /// `general.name` of the GGUF.
    pub name: Option<String>,
    /// Trained context length.
    #[cfg_attr(feature = "specta", specta(type = Option<f64>))]
    pub context_length: Option<u64>,
}

/// Progress of a download or import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DownloadProgress {
    /// The model id.
    pub id: String,
    /// Bytes on disk so far.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub downloaded: u64,
    /// Bytes in all, when the server says.
    #[cfg_attr(feature = "specta", specta(type = Option<f64>))]
    pub total: Option<u64>,
    /// Bytes already there when this attempt started (a resumed download).
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub resumed_from: u64,
    /// Attempt number, from 1.
    pub attempt: u32,
}

/// The progress callback.
pub type ProgressSink<'a> = dyn Fn(&DownloadProgress) + Send + Sync + 'a;

/// What to pull.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PullSource {
    /// A recommended model, by id.
    Recommended(String),
    /// Any GGUF URL; `sha256` is required unless the server publishes a checksum.
    Url {
        /// The file's URL (`https://...gguf`).
        url: String,
        /// Its SHA-256 in hex.
        sha256: Option<String>,
    },
}

/// A model manager failure.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The id is not a plain file name.
    #[error("invalid model id '{0}': use letters, digits, '.', '_' and '-'")]
    InvalidId(String),
    /// No such recommended model.
    #[error("unknown model '{0}': `suzent models list --recommended` shows the recommended ones")]
    UnknownRecommended(String),
    /// No such installed model.
    #[error("model '{0}' is not installed")]
    NotInstalled(String),
    /// A model with that id is there already.
    #[error("model '{0}' is already installed")]
    AlreadyInstalled(String),
    /// The server answered with an error status.
    #[error("download of '{url}' failed: HTTP {status}")]
    Http {
        /// The URL.
        url: String,
        /// The status.
        status: u16,
    },
    /// The connection failed, after the retries.
    #[error("download of '{url}' failed: {message}")]
    Transport {
        /// The URL.
        url: String,
        /// Why.
        message: String,
    },
    /// Neither a pinned checksum nor one from the server.
    #[error(
        "no SHA-256 is known for '{0}': pass the file's checksum (--sha256) so the download can be checked"
    )]
    NoChecksum(String),
    /// The file's checksum is not the expected one; the partial file was removed.
    #[error(
        "checksum mismatch for '{id}': expected {expected}, got {actual}; the download was removed"
    )]
    ChecksumMismatch {
        /// The model id.
        id: String,
        /// Expected SHA-256.
        expected: String,
        /// SHA-256 of what arrived.
        actual: String,
    },
    /// The file is not a GGUF model.
    #[error(transparent)]
    Gguf(#[from] GgufError),
    /// File system failure.
    #[error("{action} '{path}': {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: String,
        /// The error.
        source: std::io::Error,
    },
}

fn io_error<'p>(
    action: &'static str,
    path: &'p Path,
) -> impl FnOnce(std::io::Error) -> ModelError + 'p {
    move |source| ModelError::Io {
        action,
        path: path.display().to_string(),
        source,
    }
}

/// Attempts per download (the first plus retries after a dropped connection).
const ATTEMPTS: u32 = 5;
/// Progress is reported at most once per this many bytes (and at the end).
const PROGRESS_STEP: u64 = 1 << 20;
const MANIFEST: &str = "models.json";
const PARTIAL_DIR: &str = ".partial";

#[derive(Debug, Default, Serialize, Deserialize)]
struct Manifest {
    #[serde(default)]
    models: BTreeMap<String, ManifestEntry>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ManifestEntry {
    sha256: Option<String>,
    source: String,
}

/// The GGUF models folder and its downloads.
#[derive(Debug)]
pub struct ModelManager {
    dir: PathBuf,
    hub_url: String,
    catalog: Vec<RecommendedModel>,
    client: reqwest::Client,
    retry_delay: Duration,
    /// One download or import at a time (they share the manifest and the partial folder).
    busy: tokio::sync::Mutex<()>,
}

impl ModelManager {
    /// A manager of `dir` (created when first written) pulling from `hub_url`.
    pub fn new(
        dir: impl Into<PathBuf>,
        hub_url: impl Into<String>,
        client: reqwest::Client,
    ) -> ModelManager {
        ModelManager {
            dir: dir.into(),
            hub_url: hub_url.into(),
            catalog: recommended_models(),
            client,
            retry_delay: Duration::from_secs(1),
            busy: tokio::sync::Mutex::new(()),
        }
    }

    /// Replaces the recommended list (tests, packagers).
    pub fn with_catalog(mut self, catalog: Vec<RecommendedModel>) -> ModelManager {
        self.catalog = catalog;
        self
    }

    /// Sets the pause between download attempts.
    pub fn with_retry_delay(mut self, delay: Duration) -> ModelManager {
        self.retry_delay = delay;
        self
    }

    /// The models folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The recommended models.
    pub fn recommended(&self) -> &[RecommendedModel] {
        &self.catalog
    }

    /// The URL a recommended model is downloaded from.
    pub fn url_of(&self, model: &RecommendedModel) -> String {
        format!(
            "{}/{}",
            self.hub_url.trim_end_matches('/'),
            model.hub_path.trim_start_matches('/')
        )
    }

    /// The file of installed model `id`.
    pub fn path_of(&self, id: &str) -> Result<PathBuf, ModelError> {
        let path = self.dir.join(file_name(id)?);
        if path.is_file() {
            Ok(path)
        } else {
            Err(ModelError::NotInstalled(id.to_string()))
        }
    }

    /// The installed models, by id. Files whose GGUF head does not read are left out (with a
    /// warning in the log).
    pub fn list(&self) -> Result<Vec<InstalledModel>, ModelError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_error("cannot read", &self.dir)(e)),
        };
        let manifest = self.manifest();
        let mut models = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            let Some(id) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".gguf"))
            else {
                continue;
            };
            if file_name(id).is_err() || !path.is_file() {
                continue;
            }
            match self.describe(id, &path, &manifest) {
                Ok(model) => models.push(model),
                Err(e) => tracing::warn!(error = %e, "skipping a file in the models folder"),
            }
        }
        models.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(models)
    }

    fn describe(
        &self,
        id: &str,
        path: &Path,
        manifest: &Manifest,
    ) -> Result<InstalledModel, ModelError> {
        let info = read_gguf_info(path)?;
        let size_bytes = std::fs::metadata(path)
            .map_err(io_error("cannot read", path))?
            .len();
        let entry = manifest.models.get(id);
        Ok(InstalledModel {
            id: id.to_string(),
            path: path.display().to_string(),
            size_bytes,
            sha256: entry.and_then(|e| e.sha256.clone()),
            source: entry
                .map(|e| e.source.clone())
                .unwrap_or_else(|| "folder".into()),
            architecture: info.architecture,
            name: info.name,
            context_length: info.context_length,
        })
    }

    fn manifest(&self) -> Manifest {
        std::fs::read(self.dir.join(MANIFEST))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    fn record(&self, id: &str, entry: Option<ManifestEntry>) -> Result<(), ModelError> {
        let mut manifest = self.manifest();
        match entry {
            Some(entry) => manifest.models.insert(id.to_string(), entry),
            None => manifest.models.remove(id),
        };
        let path = self.dir.join(MANIFEST);
        let temporary = self.dir.join(format!("{MANIFEST}.tmp"));
        let bytes = serde_json::to_vec_pretty(&manifest).unwrap_or_default();
        std::fs::write(&temporary, bytes).map_err(io_error("cannot write", &temporary))?;
        std::fs::rename(&temporary, &path).map_err(io_error("cannot write", &path))
    }

    /// Downloads a model into the folder; `progress` gets the bytes so far.
    pub async fn pull(
        &self,
        source: PullSource,
        progress: &ProgressSink<'_>,
    ) -> Result<InstalledModel, ModelError> {
        let (id, url, pinned, label) = match source {
            PullSource::Recommended(id) => {
                let model = self
                    .catalog
                    .iter()
                    .find(|m| m.id == id)
                    .ok_or_else(|| ModelError::UnknownRecommended(id.clone()))?;
                (
                    model.id.clone(),
                    self.url_of(model),
                    model.sha256.clone(),
                    format!("recommended:{}", model.id),
                )
            }
            PullSource::Url { url, sha256 } => {
                let stem = url
                    .split(['?', '#'])
                    .next()
                    .and_then(|u| u.rsplit('/').next())
                    .and_then(|name| name.strip_suffix(".gguf"))
                    .unwrap_or_default()
                    .to_string();
                (stem, url.clone(), sha256, url)
            }
        };
        let name = file_name(&id)?;
        let _busy = self.busy.lock().await;
        let destination = self.dir.join(&name);
        if destination.exists() {
            return Err(ModelError::AlreadyInstalled(id));
        }
        let partial_dir = self.dir.join(PARTIAL_DIR);
        tokio::fs::create_dir_all(&partial_dir)
            .await
            .map_err(io_error("cannot create", &partial_dir))?;
        let partial = partial_dir.join(format!("{name}.part"));
        let mut expected = pinned.map(|s| s.to_ascii_lowercase());
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self
                .attempt(&id, &url, &partial, &mut expected, attempt, progress)
                .await
            {
                Ok(()) => break,
                Err(Attempt::Retry(message)) if attempt < ATTEMPTS => {
                    tracing::warn!(url = %url, attempt, error = %message, "download interrupted; resuming");
                    tokio::time::sleep(self.retry_delay * attempt).await;
                }
                Err(Attempt::Retry(message)) => {
                    return Err(ModelError::Transport { url, message });
                }
                Err(Attempt::Fatal(error)) => return Err(error),
            }
        }
        let Some(expected) = expected else {
            let _ = tokio::fs::remove_file(&partial).await;
            return Err(ModelError::NoChecksum(url));
        };
        let actual = sha256_file(&partial).await?;
        if actual != expected {
            let _ = tokio::fs::remove_file(&partial).await;
            return Err(ModelError::ChecksumMismatch {
                id,
                expected,
                actual,
            });
        }
        self.install(&id, &partial, &destination, Some(actual), label)
    }

    /// Checks `partial` is GGUF, moves it into place and records it.
    fn install(
        &self,
        id: &str,
        partial: &Path,
        destination: &Path,
        sha256: Option<String>,
        source: String,
    ) -> Result<InstalledModel, ModelError> {
        if let Err(e) = read_gguf_info(partial) {
            let _ = std::fs::remove_file(partial);
            return Err(e.into());
        }
        std::fs::rename(partial, destination)
            .map_err(io_error("cannot move into place", destination))?;
        self.record(id, Some(ManifestEntry { sha256, source }))?;
        self.describe(id, destination, &self.manifest())
    }

    async fn attempt(
        &self,
        id: &str,
        url: &str,
        partial: &Path,
        expected: &mut Option<String>,
        attempt: u32,
        progress: &ProgressSink<'_>,
    ) -> Result<(), Attempt> {
        let have = tokio::fs::metadata(partial)
            .await
            .map(|m| m.len())
            .unwrap_or(0);
        let mut request = self.client.get(url);
        if have > 0 {
            request = request.header(reqwest::header::RANGE, format!("bytes={have}-"));
        }
        let response = request
            .send()
            .await
            .map_err(|e| Attempt::Retry(e.to_string()))?;
        let status = response.status();
        if let Some(published) = published_sha256(response.headers())
            && expected.is_none()
        {
            *expected = Some(published);
        }
        let resumed = status == reqwest::StatusCode::PARTIAL_CONTENT;
        if status == reqwest::StatusCode::RANGE_NOT_SATISFIABLE && have > 0 {
            // Everything is there already.
            return Ok(());
        }
        if !status.is_success() {
            let error = ModelError::Http {
                url: url.to_string(),
                status: status.as_u16(),
            };
            return Err(if status.is_server_error() {
                Attempt::Retry(error.to_string())
            } else {
                Attempt::Fatal(error)
            });
        }
        let start = if resumed { have } else { 0 };
        let total = if resumed {
            content_range_total(response.headers())
        } else {
            response.content_length()
        };
        let mut file = tokio::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .append(resumed)
            .truncate(!resumed)
            .open(partial)
            .await
            .map_err(|e| Attempt::Fatal(io_error("cannot write", partial)(e)))?;
        let mut downloaded = start;
        let report = |downloaded: u64| {
            progress(&DownloadProgress {
                id: id.to_string(),
                downloaded,
                total,
                resumed_from: start,
                attempt,
            })
        };
        report(downloaded);
        let mut last_report = downloaded;
        let mut body = response.bytes_stream();
        while let Some(chunk) = body.next().await {
            let chunk = match chunk {
                Ok(chunk) => chunk,
                Err(e) => {
                    let _ = file.flush().await;
                    return Err(Attempt::Retry(e.to_string()));
                }
            };
            file.write_all(&chunk)
                .await
                .map_err(|e| Attempt::Fatal(io_error("cannot write", partial)(e)))?;
            downloaded += chunk.len() as u64;
            if downloaded - last_report >= PROGRESS_STEP {
                report(downloaded);
                last_report = downloaded;
            }
        }
        file.flush()
            .await
            .map_err(|e| Attempt::Fatal(io_error("cannot write", partial)(e)))?;
        if last_report != downloaded {
            report(downloaded);
        }
        if let Some(total) = total
            && downloaded < total
        {
            return Err(Attempt::Retry(format!(
                "the connection closed after {downloaded} of {total} bytes"
            )));
        }
        Ok(())
    }

    /// Copies a GGUF file from disk into the folder (its id: the file name without `.gguf`).
    pub async fn import(
        &self,
        source: &Path,
        progress: &ProgressSink<'_>,
    ) -> Result<InstalledModel, ModelError> {
        read_gguf_info(source)?;
        let id = source
            .file_name()
            .and_then(|n| n.to_str())
            .map(|n| n.strip_suffix(".gguf").unwrap_or(n).to_string())
            .unwrap_or_default();
        let name = file_name(&id)?;
        let _busy = self.busy.lock().await;
        let destination = self.dir.join(&name);
        if destination.exists() {
            return Err(ModelError::AlreadyInstalled(id));
        }
        let partial_dir = self.dir.join(PARTIAL_DIR);
        tokio::fs::create_dir_all(&partial_dir)
            .await
            .map_err(io_error("cannot create", &partial_dir))?;
        let partial = partial_dir.join(format!("{name}.part"));
        let total = tokio::fs::metadata(source)
            .await
            .map_err(io_error("cannot read", source))?
            .len();
        let copied = copy_hashing(source, &partial, total, &id, progress).await;
        let sha256 = match copied {
            Ok(sha256) => sha256,
            Err(e) => {
                let _ = tokio::fs::remove_file(&partial).await;
                return Err(e);
            }
        };
        self.install(
            &id,
            &partial,
            &destination,
            Some(sha256),
            format!("import:{}", source.display()),
        )
    }

    /// Deletes an installed model.
    pub fn remove(&self, id: &str) -> Result<(), ModelError> {
        let path = self.path_of(id)?;
        std::fs::remove_file(&path).map_err(io_error("cannot delete", &path))?;
        self.record(id, None)
    }
}

enum Attempt {
    /// Worth another attempt (from where the partial file ends).
    Retry(String),
    /// Not worth retrying.
    Fatal(ModelError),
}

/// `ID.gguf`, when `id` is a plain name.
fn file_name(id: &str) -> Result<String, ModelError> {
    let valid = !id.is_empty()
        && id.len() <= 200
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if valid {
        Ok(format!("{id}.gguf"))
    } else {
        Err(ModelError::InvalidId(id.to_string()))
    }
}

/// The SHA-256 a server publishes for the file: Hugging Face's `X-Linked-Etag` (LFS files), or
/// an `ETag` that is 64 hex digits.
fn published_sha256(headers: &reqwest::header::HeaderMap) -> Option<String> {
    ["x-linked-etag", "etag"].iter().find_map(|name| {
        let value = headers.get(*name)?.to_str().ok()?;
        let value = value.trim().trim_start_matches("W/").trim_matches('"');
        (value.len() == 64 && value.chars().all(|c| c.is_ascii_hexdigit()))
            .then(|| value.to_ascii_lowercase())
    })
}

/// The total of `Content-Range: bytes a-b/TOTAL`.
fn content_range_total(headers: &reqwest::header::HeaderMap) -> Option<u64> {
    headers
        .get(reqwest::header::CONTENT_RANGE)?
        .to_str()
        .ok()?
        .rsplit('/')
        .next()?
        .trim()
        .parse()
        .ok()
}

/// The SHA-256 of a file, in lower-case hex.
pub async fn sha256_file(path: &Path) -> Result<String, ModelError> {
    let path = path.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let mut file = std::fs::File::open(&path).map_err(io_error("cannot read", &path))?;
        let mut hasher = Sha256::new();
        std::io::copy(&mut file, &mut hasher).map_err(io_error("cannot read", &path))?;
        Ok(hex(&hasher.finalize()))
    })
    .await
    .map_err(|e| ModelError::Io {
        action: "cannot hash",
        path: String::new(),
        source: std::io::Error::other(e.to_string()),
    })?
}

async fn copy_hashing(
    source: &Path,
    destination: &Path,
    total: u64,
    id: &str,
    progress: &ProgressSink<'_>,
) -> Result<String, ModelError> {
    use tokio::io::AsyncReadExt;
    let mut input = tokio::fs::File::open(source)
        .await
        .map_err(io_error("cannot read", source))?;
    let mut output = tokio::fs::File::create(destination)
        .await
        .map_err(io_error("cannot write", destination))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    let mut copied = 0u64;
    loop {
        let n = input
            .read(&mut buffer)
            .await
            .map_err(io_error("cannot read", source))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        output
            .write_all(&buffer[..n])
            .await
            .map_err(io_error("cannot write", destination))?;
        copied += n as u64;
        progress(&DownloadProgress {
            id: id.to_string(),
            downloaded: copied,
            total: Some(total),
            resumed_from: 0,
            attempt: 1,
        });
    }
    output
        .flush()
        .await
        .map_err(io_error("cannot write", destination))?;
    Ok(hex(&hasher.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn ids_are_plain_file_names() {
        assert_eq!(
            file_name("qwen2.5-0.5b_q4").unwrap(),
            "qwen2.5-0.5b_q4.gguf"
        );
        for bad in ["", "../x", "a/b", ".hidden", "a b", "x\\y"] {
            assert!(file_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_published_checksum_is_read_from_the_linked_etag() {
        let mut headers = reqwest::header::HeaderMap::new();
        let sha = "A".repeat(64);
        headers.insert("etag", "\"abc\"".parse().unwrap());
        assert_eq!(published_sha256(&headers), None);
        headers.insert("x-linked-etag", format!("\"{sha}\"").parse().unwrap());
        assert_eq!(published_sha256(&headers), Some("a".repeat(64)));
    }

    #[test]
    fn recommended_models_have_a_small_one_and_a_coder_one() {
        let models = recommended_models();
        assert!(models.iter().any(|m| m.min_ram_gb <= 2));
        assert!(models.iter().any(|m| m.id.contains("coder")));
        for model in &models {
            assert!(file_name(&model.id).is_ok());
            assert!(model.hub_path.ends_with(".gguf"));
        }
    }

    #[test]
    fn listing_a_missing_folder_is_empty() {
        let manager = ModelManager::new(
            "/nonexistent/suzent-models",
            DEFAULT_HUB_URL,
            reqwest::Client::new(),
        );
        assert_eq!(manager.list().unwrap(), Vec::new());
    }
}
