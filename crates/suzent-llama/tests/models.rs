//! The model manager against a local HTTP server serving a real GGUF model (SmolLM2-135M from
//! PyPI): progress, resume after a dropped connection, checksum refusal, import, removal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use pretty_assertions::assert_eq;
use sha2::{Digest, Sha256};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use suzent_llama::models::{
    DownloadProgress, ModelError, ModelManager, PullSource, RecommendedModel,
};

#[derive(Clone)]
struct Hub {
    file: Bytes,
    /// What `X-Linked-Etag` says (None: no header).
    published: Option<String>,
    /// The first response stops after this many bytes, then the connection is cut.
    drop_after: Option<usize>,
    /// The `Range` header of each request.
    ranges: Arc<Mutex<Vec<Option<String>>>>,
}

async fn serve_file(State(hub): State<Hub>, headers: HeaderMap) -> Response {
    let range = headers
        .get(header::RANGE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let first = {
        let mut ranges = hub.ranges.lock().unwrap_or_else(|e| e.into_inner());
        ranges.push(range.clone());
        ranges.len() == 1
    };
    let total = hub.file.len();
    let start = range
        .as_deref()
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.trim_end_matches('-').parse::<usize>().ok())
        .unwrap_or(0);
    let mut builder = Response::builder()
        .header(header::ACCEPT_RANGES, "bytes")
        .header(header::CONTENT_LENGTH, total - start);
    if let Some(sha) = &hub.published {
        builder = builder.header("x-linked-etag", format!("\"{sha}\""));
    }
    if start > 0 {
        builder = builder.status(StatusCode::PARTIAL_CONTENT).header(
            header::CONTENT_RANGE,
            format!("bytes {start}-{}/{total}", total - 1),
        );
    }
    let rest = hub.file.slice(start..);
    let body = match hub.drop_after.filter(|_| first) {
        Some(cut) => {
            let part = rest.slice(..cut);
            let chunks = futures::stream::iter(vec![
                Ok::<Bytes, std::io::Error>(part),
                Err(std::io::Error::other("connection dropped")),
            ]);
            Body::from_stream(chunks)
        }
        None => Body::from(rest),
    };
    builder
        .body(body)
        .unwrap_or_else(|_| Response::new(Body::empty()))
}

async fn start_hub(hub: Hub) -> anyhow::Result<String> {
    let app = Router::new()
        .route(
            "/test/tiny/resolve/main/tiny.gguf",
            axum::routing::get(serve_file),
        )
        .with_state(hub);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(format!("http://{address}"))
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn catalog(sha256: Option<String>) -> Vec<RecommendedModel> {
    vec![RecommendedModel {
        id: "tiny".into(),
        name: "Tiny".into(),
        hub_path: "test/tiny/resolve/main/tiny.gguf".into(),
        size_bytes: 98_000_000,
        sha256,
        license: "Apache-2.0".into(),
        purpose: "tests".into(),
        min_ram_gb: 1,
    }]
}

struct Setup {
    manager: ModelManager,
    file: Bytes,
    ranges: Arc<Mutex<Vec<Option<String>>>>,
    _dir: tempfile::TempDir,
}

async fn setup(
    published: bool,
    drop_after: Option<usize>,
    pinned: Option<String>,
) -> anyhow::Result<Setup> {
    let file = Bytes::from(std::fs::read(common::smollm2())?);
    let ranges = Arc::new(Mutex::new(Vec::new()));
    let hub = Hub {
        published: published.then(|| sha256(&file)),
        file: file.clone(),
        drop_after,
        ranges: ranges.clone(),
    };
    let url = start_hub(hub).await?;
    let dir = tempfile::tempdir()?;
    let manager = ModelManager::new(dir.path().join("gguf"), url, reqwest::Client::new())
        .with_catalog(catalog(pinned))
        .with_retry_delay(Duration::from_millis(10));
    Ok(Setup {
        manager,
        file,
        ranges,
        _dir: dir,
    })
}

fn recorder() -> (
    Arc<Mutex<Vec<DownloadProgress>>>,
    impl Fn(&DownloadProgress) + Send + Sync,
) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    (events, move |p: &DownloadProgress| {
        sink.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(p.clone())
    })
}

#[tokio::test]
async fn a_pull_reports_progress_and_installs_the_checked_file() -> anyhow::Result<()> {
    let s = setup(true, None, None).await?;
    let (events, progress) = recorder();
    let model = s
        .manager
        .pull(PullSource::Recommended("tiny".into()), &progress)
        .await?;
    let total = s.file.len() as u64;
    assert_eq!(model.id, "tiny");
    assert_eq!(model.size_bytes, total);
    assert_eq!(model.sha256, Some(sha256(&s.file)));
    assert_eq!(model.source, "recommended:tiny");
    assert_eq!(model.architecture, "llama");
    assert_eq!(std::fs::read(&model.path)?, s.file.to_vec());
    let events = events.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert!(events.len() > 10, "{} events", events.len());
    assert!(
        events
            .windows(2)
            .all(|w| w[0].downloaded <= w[1].downloaded)
    );
    assert_eq!(
        events.last().map(|e| (e.downloaded, e.total)),
        Some((total, Some(total)))
    );
    assert_eq!(s.manager.list()?, vec![model]);
    assert!(!s.manager.dir().join(".partial/tiny.gguf.part").exists());
    Ok(())
}

#[tokio::test]
async fn a_dropped_connection_is_resumed_with_a_range_request() -> anyhow::Result<()> {
    let cut = 40_000_000;
    let s = setup(true, Some(cut), None).await?;
    let (events, progress) = recorder();
    let model = s
        .manager
        .pull(PullSource::Recommended("tiny".into()), &progress)
        .await?;
    assert_eq!(std::fs::read(&model.path)?, s.file.to_vec());
    let ranges = s.ranges.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert_eq!(ranges.len(), 2, "{ranges:?}");
    assert_eq!(ranges[0], None);
    let resumed_at = ranges[1]
        .as_deref()
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.trim_end_matches('-').parse::<u64>().ok())
        .unwrap_or(0);
    assert!(resumed_at > 0 && resumed_at <= cut as u64, "{ranges:?}");
    let events = events.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let second: Vec<_> = events.iter().filter(|e| e.attempt == 2).collect();
    assert_eq!(
        second.first().map(|e| (e.resumed_from, e.downloaded)),
        Some((resumed_at, resumed_at))
    );
    assert_eq!(
        second.last().map(|e| e.downloaded),
        Some(s.file.len() as u64)
    );
    Ok(())
}

#[tokio::test]
async fn a_checksum_mismatch_is_refused_and_the_partial_file_removed() -> anyhow::Result<()> {
    let wrong = "0".repeat(64);
    let s = setup(true, None, Some(wrong.clone())).await?;
    let (_events, progress) = recorder();
    let error = s
        .manager
        .pull(PullSource::Recommended("tiny".into()), &progress)
        .await
        .unwrap_err();
    let ModelError::ChecksumMismatch {
        id,
        expected,
        actual,
    } = error
    else {
        panic!("{error}");
    };
    assert_eq!((id.as_str(), expected), ("tiny", wrong));
    assert_eq!(actual, sha256(&s.file));
    assert!(!s.manager.dir().join(".partial/tiny.gguf.part").exists());
    assert!(!s.manager.dir().join("tiny.gguf").exists());
    assert_eq!(s.manager.list()?, Vec::new());
    Ok(())
}

#[tokio::test]
async fn a_download_with_no_known_checksum_is_refused() -> anyhow::Result<()> {
    let s = setup(false, None, None).await?;
    let (_events, progress) = recorder();
    let error = s
        .manager
        .pull(PullSource::Recommended("tiny".into()), &progress)
        .await
        .unwrap_err();
    assert!(matches!(error, ModelError::NoChecksum(_)), "{error}");
    assert!(!s.manager.dir().join(".partial/tiny.gguf.part").exists());
    assert_eq!(s.manager.list()?, Vec::new());
    Ok(())
}

#[tokio::test]
async fn a_url_pull_with_the_right_checksum_given_installs() -> anyhow::Result<()> {
    let s = setup(false, None, None).await?;
    let (_events, progress) = recorder();
    let url = s.manager.url_of(&s.manager.recommended()[0]);
    let model = s
        .manager
        .pull(
            PullSource::Url {
                url: url.clone(),
                sha256: Some(sha256(&s.file).to_uppercase()),
            },
            &progress,
        )
        .await?;
    assert_eq!(
        (model.id.as_str(), model.source.as_str()),
        ("tiny", url.as_str())
    );
    Ok(())
}

#[tokio::test]
async fn an_imported_gguf_is_listed_and_removed() -> anyhow::Result<()> {
    let s = setup(false, None, None).await?;
    let (_events, progress) = recorder();
    let source = common::smollm2();
    let model = s.manager.import(&source, &progress).await?;
    assert_eq!(model.id, "SmolLM2-135M-Instruct.Q4_1");
    assert_eq!(model.sha256, Some(sha256(&s.file)));
    assert_eq!(model.source, format!("import:{}", source.display()));
    let again = s.manager.import(&source, &progress).await.unwrap_err();
    assert!(matches!(again, ModelError::AlreadyInstalled(_)), "{again}");
    assert_eq!(s.manager.list()?.len(), 1);
    s.manager.remove(&model.id)?;
    assert_eq!(s.manager.list()?, Vec::new());
    let missing = s.manager.remove(&model.id).unwrap_err();
    assert!(matches!(missing, ModelError::NotInstalled(_)), "{missing}");
    Ok(())
}

#[tokio::test]
async fn a_file_that_is_not_gguf_cannot_be_imported() -> anyhow::Result<()> {
    let s = setup(false, None, None).await?;
    let dir = tempfile::tempdir()?;
    let fake = dir.path().join("fake.gguf");
    std::fs::write(&fake, b"not a model at all")?;
    let (_events, progress) = recorder();
    let error = s.manager.import(&fake, &progress).await.unwrap_err();
    assert!(error.to_string().contains("not a GGUF model"), "{error}");
    assert_eq!(s.manager.list()?, Vec::new());
    Ok(())
}
