//! The MCP client and registry against real servers: `@modelcontextprotocol/server-everything`
//! and `@modelcontextprotocol/server-filesystem` from npm (installed under tests/mcp-servers by
//! `.ci/run`), and our misbehaving server (tests/mcp-servers/misbehaving.mjs).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use anyhow::Result;
use async_trait::async_trait;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use suzent_mcp::{
    CachedSchemas, McpError, McpOptions, McpRegistry, McpServerConfig, McpServerState,
    McpToolStatus, SchemaCache, is_valid_name,
};

fn servers_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp-servers");
    assert!(
        dir.join("node_modules/@modelcontextprotocol/server-everything")
            .is_dir(),
        "the npm MCP servers are not installed: run `npm ci` in {} (.ci/run does)",
        dir.display()
    );
    dir
}

fn everything() -> McpServerConfig {
    let script =
        servers_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    McpServerConfig::stdio("node", vec![script.display().to_string(), "stdio".into()])
}

fn misbehaving(label: &str, state: &std::path::Path) -> McpServerConfig {
    let mut c = McpServerConfig::stdio(
        "node",
        vec![
            servers_dir().join("misbehaving.mjs").display().to_string(),
            label.into(),
        ],
    );
    c.env
        .insert("MCP_STATE_DIR".into(), state.display().to_string());
    c
}

struct Fixture {
    dir: tempfile::TempDir,
    registry: McpRegistry,
}

fn fixture(tune: impl FnOnce(&mut McpOptions)) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let mut options = McpOptions::new(dir.path().join("mcp.json"));
    options.backoff_base = Duration::from_millis(300);
    tune(&mut options);
    let registry = McpRegistry::open(options).unwrap();
    Fixture { dir, registry }
}

#[derive(Default)]
struct MemoryCache(Mutex<HashMap<String, CachedSchemas>>);

#[async_trait]
impl SchemaCache for MemoryCache {
    async fn load(&self, server: &str) -> Result<Option<CachedSchemas>, McpError> {
        Ok(self.0.lock().unwrap().get(server).cloned())
    }
    async fn store(&self, server: &str, entry: &CachedSchemas) -> Result<(), McpError> {
        self.0.lock().unwrap().insert(server.into(), entry.clone());
        Ok(())
    }
    async fn invalidate(&self, server: Option<&str>) -> Result<(), McpError> {
        let mut m = self.0.lock().unwrap();
        match server {
            Some(s) => {
                m.remove(s);
            }
            None => m.clear(),
        }
        Ok(())
    }
}

#[tokio::test]
async fn everything_server_lists_its_tools_and_echo_runs_over_stdio() -> Result<()> {
    let f = fixture(|_| {});
    f.registry.add_server("everything", everything())?;
    let tools = f.registry.discover(Some("echo"), true).await;
    let echo = tools
        .iter()
        .find(|t| t.tool_name == "echo")
        .expect("echo listed");
    assert_eq!(echo.qualified_name, "mcp__everything__echo");
    assert_eq!(echo.status, McpToolStatus::Active);
    assert_eq!(echo.read_only_hint, Some(true));
    // Not trusted: the read-only hint does not count.
    assert!(echo.requires_approval);
    let out = f
        .registry
        .call("everything", "echo", json!({"message": "hello mcp"}))
        .await?;
    assert!(out.text.contains("hello mcp"), "{}", out.text);
    assert!(!out.is_error);
    Ok(())
}

#[tokio::test]
async fn read_only_hint_counts_only_for_a_trusted_server() -> Result<()> {
    let f = fixture(|_| {});
    let mut config = everything();
    config.trusted = true;
    f.registry.add_server("everything", config)?;
    let tools = f.registry.discover(None, true).await;
    let by = |n: &str| tools.iter().find(|t| t.tool_name == n).unwrap();
    assert!(!by("echo").requires_approval, "read-only and trusted");
    assert!(
        by("toggle-simulated-logging").requires_approval,
        "not read-only"
    );
    Ok(())
}

#[tokio::test]
async fn everything_server_over_streamable_http_answers_calls() -> Result<()> {
    let dir = servers_dir();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0")?;
        l.local_addr()?.port()
    };
    let mut child = tokio::process::Command::new("node")
        .arg(dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let url = format!("http://127.0.0.1:{port}/mcp");
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let f = fixture(|_| {});
    let mut config = McpServerConfig::http(&url);
    config.headers.insert("X-Suzent-Test".into(), "1".into());
    f.registry.add_server("remote", config)?;
    let tools = f.registry.discover(None, true).await;
    assert!(
        tools
            .iter()
            .any(|t| t.qualified_name == "mcp__remote__get-sum"),
        "{tools:?}"
    );
    let out = f
        .registry
        .call("remote", "get-sum", json!({"a": 2, "b": 40}))
        .await?;
    assert!(out.text.contains("42"), "{}", out.text);
    f.registry.shutdown().await;
    child.kill().await?;
    Ok(())
}

#[tokio::test]
async fn filesystem_server_reads_a_file_in_its_allowed_directory() -> Result<()> {
    let f = fixture(|_| {});
    let allowed = f.dir.path().join("allowed");
    std::fs::create_dir_all(&allowed)?;
    std::fs::write(allowed.join("note.txt"), "the filesystem server read this")?;
    let script =
        servers_dir().join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    let config = McpServerConfig::stdio(
        "node",
        vec![
            script.display().to_string(),
            allowed.canonicalize()?.display().to_string(),
        ],
    );
    f.registry.add_server("fs", config)?;
    let tools = f.registry.discover(None, true).await;
    assert!(
        tools
            .iter()
            .any(|t| t.qualified_name == "mcp__fs__read_text_file"),
        "{tools:?}"
    );
    let path = allowed.canonicalize()?.join("note.txt");
    let out = f
        .registry
        .call(
            "fs",
            "read_text_file",
            json!({"path": path.display().to_string()}),
        )
        .await?;
    assert!(
        out.text.contains("the filesystem server read this"),
        "{}",
        out.text
    );
    Ok(())
}

#[tokio::test]
async fn banner_and_chatter_on_stdout_are_not_fatal() -> Result<()> {
    let f = fixture(|_| {});
    f.registry
        .add_server("odd", misbehaving("odd", f.dir.path()))?;
    let out = f.registry.call("odd", "whoami", json!({})).await?;
    assert_eq!(out.text, "server odd");
    Ok(())
}

#[tokio::test]
async fn long_and_odd_names_are_sanitized_and_calls_use_the_original_names() -> Result<()> {
    let f = fixture(|_| {});
    let long_server = "awslabs_billing-cost-management-mcp-server";
    f.registry
        .add_server(long_server, misbehaving("aws", f.dir.path()))?;
    f.registry
        .add_server("my.server", misbehaving("dotted", f.dir.path()))?;
    let tools = f.registry.discover(None, true).await;
    let mut names: Vec<&str> = tools.iter().map(|t| t.qualified_name.as_str()).collect();
    assert!(names.iter().all(|n| is_valid_name(n)), "{names:?}");
    names.sort();
    let count = names.len();
    names.dedup();
    assert_eq!(names.len(), count, "names are distinct");
    let long = tools
        .iter()
        .find(|t| t.toolkit_slug == long_server && t.tool_name.len() > 64)
        .unwrap();
    assert!(long.qualified_name.len() <= 64);
    let resolved = f.registry.resolve(&long.qualified_name).unwrap();
    let out = f
        .registry
        .call(&resolved.toolkit_slug, &resolved.tool_name, json!({}))
        .await?;
    assert_eq!(out.text, "long tool ran on aws");
    let dotted = tools
        .iter()
        .find(|t| t.toolkit_slug == "my.server" && t.tool_name == "whoami")
        .unwrap();
    assert!(dotted.qualified_name.starts_with("mcp__my_server__whoami_"));
    Ok(())
}

#[tokio::test]
async fn two_servers_exposing_send_email_are_two_tools_each_reaching_its_own_server() -> Result<()>
{
    let f = fixture(|_| {});
    f.registry
        .add_server("mail_a", misbehaving("A", f.dir.path()))?;
    f.registry
        .add_server("mail_b", misbehaving("B", f.dir.path()))?;
    let tools = f.registry.discover(Some("send_email"), true).await;
    let names: Vec<&str> = tools.iter().map(|t| t.qualified_name.as_str()).collect();
    assert_eq!(
        names,
        ["mcp__mail_a__send_email", "mcp__mail_b__send_email"]
    );
    for (qualified, label) in [
        ("mcp__mail_a__send_email", "A"),
        ("mcp__mail_b__send_email", "B"),
    ] {
        let t = f.registry.resolve(qualified).unwrap();
        assert_eq!(t.tool_name, "send_email");
        let out = f
            .registry
            .call(
                &t.toolkit_slug,
                &t.tool_name,
                json!({"to": "ann@example.com"}),
            )
            .await?;
        assert_eq!(
            out.text,
            format!("email to ann@example.com sent by server {label}")
        );
    }
    Ok(())
}

#[tokio::test]
async fn a_crashed_server_fails_calls_fast_and_is_restarted_after_its_backoff() -> Result<()> {
    let f = fixture(|o| o.backoff_base = Duration::from_millis(500));
    f.registry
        .add_server("odd", misbehaving("crashy", f.dir.path()))?;
    assert_eq!(
        f.registry
            .call("odd", "count_starts", json!({}))
            .await?
            .text,
        "started 1 times"
    );
    let started = std::time::Instant::now();
    let err = f
        .registry
        .call("odd", "crash", json!({}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("stopped"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the crash did not wait for the call timeout"
    );
    // Within the backoff: refused at once, saying when it restarts.
    let err = f
        .registry
        .call("odd", "whoami", json!({}))
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::Backoff { .. }), "{err}");
    let info = f.registry.servers();
    assert_eq!(info[0].state, McpServerState::Failed);
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(
        f.registry
            .call("odd", "count_starts", json!({}))
            .await?
            .text,
        "started 2 times"
    );
    assert_eq!(f.registry.servers()[0].state, McpServerState::Running);
    Ok(())
}

#[tokio::test]
async fn list_changed_notification_refreshes_the_tool_list() -> Result<()> {
    let f = fixture(|_| {});
    f.registry
        .add_server("odd", misbehaving("dyn", f.dir.path()))?;
    f.registry.discover(None, true).await;
    assert!(f.registry.resolve("mcp__odd__brand_new").is_none());
    f.registry
        .call("odd", "add_tool", json!({"name": "brand_new"}))
        .await?;
    let mut found = None;
    for _ in 0..50 {
        found = f.registry.resolve("mcp__odd__brand_new");
        if found.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let tool = found.expect("the new tool appears after list_changed");
    let out = f.registry.call("odd", &tool.tool_name, json!({})).await?;
    assert_eq!(out.text, "brand_new ran on dyn");
    Ok(())
}

#[tokio::test]
async fn one_pooled_connection_serves_many_calls_and_closes_when_idle() -> Result<()> {
    let f = fixture(|o| o.idle_timeout = Duration::from_millis(400));
    f.registry
        .add_server("odd", misbehaving("pooled", f.dir.path()))?;
    for _ in 0..5 {
        assert_eq!(
            f.registry
                .call("odd", "count_starts", json!({}))
                .await?
                .text,
            "started 1 times"
        );
    }
    assert!(f.registry.is_connected("odd").await);
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert!(
        !f.registry.is_connected("odd").await,
        "the idle connection was closed"
    );
    assert_eq!(
        f.registry
            .call("odd", "count_starts", json!({}))
            .await?
            .text,
        "started 2 times"
    );
    Ok(())
}

#[tokio::test]
async fn schemas_are_cached_reloaded_without_connecting_and_invalidated_per_server() -> Result<()> {
    let cache = Arc::new(MemoryCache::default());
    let dir = tempfile::tempdir()?;
    let options = || {
        let mut o = McpOptions::new(dir.path().join("mcp.json"));
        o.cache = Some(cache.clone() as Arc<dyn SchemaCache>);
        o
    };
    let first = McpRegistry::open(options())?;
    first.add_server("odd", misbehaving("cached", dir.path()))?;
    assert_eq!(first.prewarm().await, 7);
    first.shutdown().await;

    let second = McpRegistry::open(options())?;
    assert!(second.needs_discovery());
    assert_eq!(second.load_cache().await?, 7);
    assert!(!second.needs_discovery());
    let tools = second.discover(Some("whoami"), false).await;
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].status, McpToolStatus::Discovered);
    assert!(
        !second.is_connected("odd").await,
        "the cache answered, nothing was started"
    );
    let starts = std::fs::read_to_string(dir.path().join("cached.starts"))?;
    assert_eq!(starts, "1");

    second.invalidate(Some("odd")).await?;
    assert!(second.snapshot().is_empty());
    assert!(cache.0.lock().unwrap().is_empty());
    Ok(())
}

#[tokio::test]
async fn expired_schemas_are_not_used() -> Result<()> {
    let cache = Arc::new(MemoryCache::default());
    let dir = tempfile::tempdir()?;
    let mut o = McpOptions::new(dir.path().join("mcp.json"));
    o.cache = Some(cache.clone() as Arc<dyn SchemaCache>);
    let registry = McpRegistry::open(o.clone())?;
    registry.add_server("odd", misbehaving("ttl", dir.path()))?;
    registry.prewarm().await;
    for entry in cache.0.lock().unwrap().values_mut() {
        entry.fetched_at -= chrono::TimeDelta::hours(25);
    }
    let again = McpRegistry::open(o)?;
    assert_eq!(again.load_cache().await?, 0);
    Ok(())
}

#[tokio::test]
async fn a_server_that_never_answers_fails_after_its_startup_timeout() -> Result<()> {
    let f = fixture(|_| {});
    let mut config = McpServerConfig::stdio("sleep", vec!["30".into()]);
    config.startup_timeout_sec = Some(1);
    f.registry.add_server("silent", config)?;
    let err = f.registry.call("silent", "x", json!({})).await.unwrap_err();
    assert!(err.to_string().contains("within 1 s"), "{err}");
    let missing = McpServerConfig::stdio("no-such-mcp-server-binary", vec![]);
    f.registry.add_server("missing", missing)?;
    let err = f
        .registry
        .call("missing", "x", json!({}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not found on PATH"), "{err}");
    Ok(())
}

#[tokio::test]
async fn a_disabled_server_is_never_started() -> Result<()> {
    let f = fixture(|_| {});
    f.registry
        .add_server("odd", misbehaving("off", f.dir.path()))?;
    f.registry.set_enabled("odd", false)?;
    let err = f
        .registry
        .call("odd", "whoami", json!({}))
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::Disabled(_)), "{err}");
    assert!(f.registry.discover(None, true).await.is_empty());
    assert!(!f.dir.path().join("off.starts").exists());
    assert_eq!(f.registry.servers()[0].state, McpServerState::Disabled);
    // `test` still works on a disabled server, on its own connection.
    let tools = f.registry.test_server("odd").await?;
    assert!(tools.iter().any(|t| t.name == "whoami"));
    Ok(())
}
