//! Plans, memory and skills through the runtime API with real SQLite, the real MiniLM model
//! files and the scripted model server speaking the OpenAI wire format.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use suzent_core::{
    AgentEvent, ApprovalResponse, ChatMessage, Config, PermissionMode, PhaseStatus, RunOutcome,
};
use suzent_runtime::provider::StaticKeys;
use suzent_runtime::{CreateChat, Paths, RunOptions, Runtime, RuntimeOptions};
use suzent_tests::{ScriptedServer, Turn, minilm_model_dir};
use tempfile::TempDir;

struct Harness {
    dir: TempDir,
    ws: PathBuf,
    runtime: Runtime,
}

fn home(dir: &Path) -> PathBuf {
    dir.join("home")
}

async fn harness(server: &ScriptedServer, mode: PermissionMode, with_model: bool) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("project");
    std::fs::create_dir_all(&ws).unwrap();
    if with_model {
        let models = home(dir.path()).join("data/models");
        std::fs::create_dir_all(&models).unwrap();
        link_dir(&minilm_model_dir(), &models.join("all-MiniLM-L6-v2"));
    }
    let mut config = Config {
        default_model: Some("openai/gpt-test".into()),
        default_mode: mode,
        tools: vec![
            "PlanningTool".into(),
            "MemorySearchTool".into(),
            "MemoryBlockUpdateTool".into(),
            "MemoryArchiveTool".into(),
            "SkillTool".into(),
            "ShellTool".into(),
        ],
        ..Config::default()
    };
    config.providers.openai.base_url = Some(server.openai_base());
    let runtime = Runtime::open(RuntimeOptions {
        paths: Paths::under(&home(dir.path())),
        keys: Arc::new(StaticKeys::new().with("openai", "sk-test")),
        config: Some(config),
    })
    .await
    .unwrap();
    Harness { dir, ws, runtime }
}

#[cfg(unix)]
fn link_dir(from: &Path, to: &Path) {
    std::os::unix::fs::symlink(from, to).unwrap();
}

#[cfg(not(unix))]
fn link_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for f in ["model.safetensors", "tokenizer.json", "config.json"] {
        std::fs::copy(from.join(f), to.join(f)).unwrap();
    }
}

impl Harness {
    async fn chat(&self) -> String {
        self.runtime
            .create_chat(CreateChat {
                workspace: Some(self.ws.clone()),
                ..CreateChat::default()
            })
            .await
            .unwrap()
            .id
    }

    async fn tool_results(&self, chat: &str) -> Vec<(String, String)> {
        self.runtime
            .messages(chat)
            .await
            .unwrap()
            .into_iter()
            .filter_map(|m| match m.message {
                ChatMessage::Tool {
                    tool_name, content, ..
                } => Some((tool_name, content)),
                _ => None,
            })
            .collect()
    }
}

fn call(id: &str, name: &str, args: serde_json::Value) -> Turn {
    Turn::tool_call(id, name, args.to_string())
}

fn system_prompt(request: &serde_json::Value) -> String {
    request["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn a_plan_is_created_advanced_over_a_skipped_phase_stored_and_announced() {
    let server = ScriptedServer::start(vec![
        call(
            "c1",
            "planning_update",
            serde_json::json!({"action": "update", "goal": "Ship the release", "phases": [
                {"id": "research", "title": "Collect changes", "capabilities": ["web"]},
                {"id": "write", "title": "Write notes", "capabilities": ["filesystem"]},
                {"id": "publish", "title": "Publish", "capabilities": ["shell"]}]}),
        ),
        call(
            "c2",
            "planning_update",
            serde_json::json!({"action": "advance", "current_phase_id": "research", "next_phase_id": "publish"}),
        ),
        call(
            "c3",
            "planning_update",
            serde_json::json!({"action": "advance", "current_phase_id": "publish", "next_phase_id": "deploy"}),
        ),
        Turn::text("Planned."),
    ])
    .await;
    let h = harness(&server, PermissionMode::Default, false).await;
    let chat = h.chat().await;
    let mut events = h.runtime.subscribe();
    let summary = h
        .runtime
        .send_message(&chat, "plan the release", RunOptions::default())
        .await
        .unwrap();
    assert_eq!(summary.outcome, RunOutcome::Completed);
    let mut announced = Vec::new();
    while let Ok(ev) = events.try_recv() {
        if let AgentEvent::PlanUpdated { chat_id, plan } = ev {
            assert_eq!(chat_id, chat);
            announced.push(plan.phases.iter().map(|p| p.status).collect::<Vec<_>>());
        }
    }
    use PhaseStatus::*;
    assert_eq!(
        announced,
        vec![
            vec![InProgress, Pending, Pending],
            vec![Completed, Completed, InProgress]
        ]
    );
    let stored = h.runtime.plan(&chat).await.unwrap().unwrap();
    assert_eq!(stored.goal, "Ship the release");
    assert_eq!(stored.phases[2].status, InProgress);
    let results = h.tool_results(&chat).await;
    assert_eq!(
        results[1].1,
        "Goal: Ship the release\n[x] research: Collect changes (web)\n[x] write: Write notes (filesystem)\n[>] publish: Publish (shell)"
    );
    assert!(
        results[2]
            .1
            .contains("unknown phase id 'deploy'; the plan's phases are: research, write, publish"),
        "{}",
        results[2].1
    );
    let event = serde_json::to_value(AgentEvent::PlanUpdated {
        chat_id: chat.clone(),
        plan: stored,
    })
    .unwrap();
    assert_eq!(event["name"], "plan_updated");
    assert_eq!(event["value"]["plan"]["phases"][0]["status"], "completed");
}

#[tokio::test]
async fn memory_search_finds_a_paraphrase_by_meaning_and_an_exact_term_by_full_text() {
    let server = ScriptedServer::start(vec![]).await;
    let h = harness(&server, PermissionMode::Default, true).await;
    h.runtime
        .archive_memories(
            None,
            "import",
            &[
                "My dog loves chasing tennis balls in the park".into(),
                "The quarterly tax filing is due at the end of April".into(),
                "Invoice 4471 from the plumber is still unpaid".into(),
                "The office coffee machine is broken again".into(),
            ],
        )
        .await
        .unwrap();
    // No word in common with the dog memory: only the vector search can find it.
    let found = h
        .runtime
        .search_memory("puppy playing fetch outside", 2)
        .await
        .unwrap();
    assert_eq!(found.text_only_reason, None);
    assert_eq!(
        found.hits[0].content,
        "My dog loves chasing tennis balls in the park"
    );
    assert_eq!(found.hits[0].matched_by, vec!["vector"]);
    // An exact term (a number) is found by full-text search.
    let found = h.runtime.search_memory("4471", 3).await.unwrap();
    assert_eq!(
        found.hits[0].content,
        "Invoice 4471 from the plumber is still unpaid"
    );
    assert!(
        found.hits[0].matched_by.contains(&"text"),
        "{:?}",
        found.hits[0]
    );
}

#[tokio::test]
async fn without_a_model_memory_search_says_it_uses_full_text_only() {
    let server = ScriptedServer::start(vec![
        call(
            "m1",
            "memory_archive",
            serde_json::json!({"content": "The wifi password is on the fridge"}),
        ),
        call(
            "m2",
            "memory_search",
            serde_json::json!({"query": "where is the wifi password", "limit": 3}),
        ),
        call(
            "m3",
            "memory_search",
            serde_json::json!({"query": "x", "limit": 51}),
        ),
        Turn::text("ok"),
    ])
    .await;
    let h = harness(&server, PermissionMode::Default, false).await;
    let chat = h.chat().await;
    h.runtime
        .send_message(&chat, "remember", RunOptions::default())
        .await
        .unwrap();
    let results = h.tool_results(&chat).await;
    assert_eq!(results[0].1, "Archived as memory 1.");
    let search = &results[1].1;
    assert!(
        search.starts_with("[full-text search only: no embedding model at "),
        "{search}"
    );
    assert!(
        search.contains("The wifi password is on the fridge (id 1, matched by text)"),
        "{search}"
    );
    assert!(
        results[2].1.contains("must be between 1 and 50, got 51"),
        "{}",
        results[2].1
    );
}

#[tokio::test]
async fn core_memory_blocks_edited_by_the_model_are_in_the_next_system_prompt_and_bounded() {
    let server = ScriptedServer::start(vec![
        call("b1", "memory_block_update", serde_json::json!({"block": "user", "operation": "replace", "content": "Name: Mira. Prefers metric units."})),
        call("b2", "memory_block_update", serde_json::json!({"block": "facts", "operation": "append", "content": "x".repeat(2100)})),
        call("b3", "memory_block_update", serde_json::json!({"block": "secrets", "operation": "replace", "content": "y"})),
        Turn::text("noted"),
    ])
    .await;
    let h = harness(&server, PermissionMode::Default, false).await;
    let chat = h.chat().await;
    h.runtime
        .send_message(&chat, "I am Mira", RunOptions::default())
        .await
        .unwrap();
    let results = h.tool_results(&chat).await;
    assert_eq!(
        results[0].1,
        "Block 'user' is now:\nName: Mira. Prefers metric units."
    );
    assert!(
        results[1]
            .1
            .contains("would hold 2100 characters; the limit is 2000"),
        "{}",
        results[1].1
    );
    assert!(
        results[2]
            .1
            .contains("unknown block 'secrets'; the blocks are persona, user, facts, context"),
        "{}",
        results[2].1
    );
    let requests = server.requests();
    assert!(!system_prompt(&requests[0]).contains("<user>"));
    assert!(
        system_prompt(&requests[1]).contains("<user>\nName: Mira. Prefers metric units.\n</user>"),
        "{}",
        system_prompt(&requests[1])
    );
    assert_eq!(
        h.runtime.memory_blocks().await.unwrap(),
        vec![(
            "user".to_string(),
            "Name: Mira. Prefers metric units.".to_string()
        )]
    );
}

#[tokio::test]
async fn a_skill_script_runs_through_run_command_and_the_permission_engine() {
    let server = ScriptedServer::start(vec![]).await;
    let h = harness(&server, PermissionMode::Default, false).await;
    // A user skill with a script, and a built-in one the user disables.
    let skill = home(h.dir.path()).join("config/skills/release-notes");
    std::fs::create_dir_all(skill.join("scripts")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: release-notes\ndescription: Draft release notes from the changelog.\n---\n\n1. Run `sh scripts/collect.sh` from the skill folder with run_command.\n2. Summarize its output.\n",
    )
    .unwrap();
    std::fs::write(
        skill.join("scripts/collect.sh"),
        "echo \"collected 3 changes\"\n",
    )
    .unwrap();
    h.runtime
        .set_skill_enabled("skill-authoring", false)
        .await
        .unwrap();
    let script = skill.join("scripts/collect.sh").display().to_string();
    server.push_turns(vec![
        call(
            "s1",
            "skill_execute",
            serde_json::json!({"skill_name": "release-notes"}),
        ),
        call(
            "s2",
            "run_command",
            serde_json::json!({"content": format!("sh {script}")}),
        ),
        Turn::text("Release notes drafted."),
    ]);
    let chat = h.chat().await;
    let summary = h
        .runtime
        .send_message(&chat, "draft the release notes", RunOptions::default())
        .await
        .unwrap();
    // The script's command went to the permission engine, which asks in default mode.
    assert_eq!(summary.outcome, RunOutcome::Suspended);
    assert_eq!(summary.pending.len(), 1);
    assert_eq!(summary.pending[0].tool_name, "run_command");
    let first = server.requests()[0].clone();
    let prompt = system_prompt(&first);
    assert!(
        prompt.contains("- release-notes: Draft release notes from the changelog."),
        "{prompt}"
    );
    assert!(
        !prompt.contains("skill-authoring"),
        "disabled skills are not listed: {prompt}"
    );
    let results = h.tool_results(&chat).await;
    assert!(
        results[0].1.starts_with(&format!(
            "# Skill: release-notes\nFolder: {}\nFiles: scripts/collect.sh\n",
            skill.display()
        )),
        "{}",
        results[0].1
    );
    assert!(results[0].1.contains("1. Run `sh scripts/collect.sh`"));
    let summary = h
        .runtime
        .resume_approvals(
            &chat,
            vec![ApprovalResponse {
                request_id: summary.pending[0].id.clone(),
                tool_call_id: None,
                action_id: "allow_once".into(),
                feedback: None,
                rule: None,
            }],
            RunOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(summary.outcome, RunOutcome::Completed);
    let results = h.tool_results(&chat).await;
    assert!(
        results[1].1.contains("collected 3 changes"),
        "{}",
        results[1].1
    );
    let skills = h.runtime.skills().await.unwrap();
    let names: Vec<(&str, bool)> = skills
        .iter()
        .map(|s| (s.name.as_str(), s.enabled))
        .collect();
    assert_eq!(
        names,
        vec![("release-notes", true), ("skill-authoring", false)]
    );
    let err = h
        .runtime
        .set_skill_enabled("nope", true)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("no skill named 'nope'"), "{err}");
}

#[tokio::test]
async fn fetching_a_page_on_this_machine_waits_for_the_users_approval() {
    let server = ScriptedServer::start(vec![call(
        "f1",
        "webpage_fetch",
        serde_json::json!({"url": "http://127.0.0.1:9/admin"}),
    )])
    .await;
    let h = harness(&server, PermissionMode::Default, false).await;
    let chat = h.chat().await;
    h.runtime
        .set_tools(&chat, Some(vec!["WebpageFetchTool".into()]))
        .await
        .unwrap();
    let summary = h
        .runtime
        .send_message(&chat, "check the router page", RunOptions::default())
        .await
        .unwrap();
    assert_eq!(summary.outcome, RunOutcome::Suspended);
    assert_eq!(summary.pending[0].tool_name, "webpage_fetch");
    assert_eq!(
        summary.pending[0].decision.reason_code,
        "tool_requires_approval"
    );
}

/// A local HTTP server with the MiniLM model files; returns its base URL and the files asked for.
async fn serve_model_files() -> (String, Arc<std::sync::Mutex<Vec<String>>>) {
    use axum::extract::Path as UrlPath;
    let files = minilm_model_dir();
    let hits = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let seen = Arc::clone(&hits);
    let app = axum::Router::new().route(
        "/models/minilm/{file}",
        axum::routing::get(move |UrlPath(file): UrlPath<String>| {
            let files = files.clone();
            let seen = Arc::clone(&seen);
            async move {
                seen.lock().unwrap().push(file.clone());
                std::fs::read(files.join(&file)).map_err(|_| axum::http::StatusCode::NOT_FOUND)
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/models/minilm", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.ok() });
    (base, hits)
}

#[tokio::test]
async fn a_download_into_an_existing_folder_replaces_only_the_model_files() {
    let (base, _) = serve_model_files().await;
    let server = ScriptedServer::start(vec![]).await;
    let h = harness(&server, PermissionMode::Default, false).await;
    let dir = home(h.dir.path()).join("data/models/all-MiniLM-L6-v2");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    std::fs::write(dir.join("config.json"), "{ stale").unwrap();

    // Two downloads at once: one fetches, the other waits and finds the files in place.
    let (a, b) = tokio::join!(
        h.runtime.download_embedding_model(Some(&base)),
        h.runtime.download_embedding_model(Some(&base)),
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!((a.0.clone(), b.0.clone()), (dir.clone(), dir.clone()));
    assert!(a.1 != b.1, "exactly one of them downloaded: {a:?} {b:?}");
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "mine"
    );
    assert_eq!(
        std::fs::read(dir.join("config.json")).unwrap(),
        std::fs::read(minilm_model_dir().join("config.json")).unwrap()
    );
    let status = h.runtime.embedding_status().await.unwrap();
    assert!(status.model_present, "{status:?}");
}

#[tokio::test]
async fn the_embedding_model_is_downloaded_once_then_used_for_vector_search() {
    let (base, hits) = serve_model_files().await;

    let server = ScriptedServer::start(vec![]).await;
    let h = harness(&server, PermissionMode::Default, false).await;
    // Stored before there is a model: no vectors. Two backfill batches (64 each).
    let mut old = vec!["My dog loves chasing tennis balls in the park".to_string()];
    old.extend((0..70).map(|i| format!("Meeting note {i}: the budget review moved to room {i}")));
    h.runtime
        .archive_memories(None, "import", &old)
        .await
        .unwrap();
    let before = h
        .runtime
        .search_memory("puppy playing fetch outside", 3)
        .await
        .unwrap();
    assert!(before.hits.is_empty() && before.text_only_reason.is_some());
    let status = h.runtime.embedding_status().await.unwrap();
    assert!(!status.active && !status.model_present && !status.provider);
    assert!(
        status
            .reason
            .as_deref()
            .unwrap()
            .starts_with("no embedding model at "),
        "{status:?}"
    );
    assert_eq!(status.entries_without_vector, 71);

    let started = std::time::Instant::now();
    let (dir, downloaded) = h
        .runtime
        .download_embedding_model(Some(&base))
        .await
        .unwrap();
    let embedded_at = std::time::Instant::now();
    assert!(downloaded);
    assert_eq!(dir, home(h.dir.path()).join("data/models/all-MiniLM-L6-v2"));
    // A search while older entries are being embedded answers with what is indexed so far.
    let searched_at = std::time::Instant::now();
    let during = h.runtime.search_memory("budget review", 3).await.unwrap();
    let search_secs = searched_at.elapsed().as_secs_f64();
    assert_eq!(during.text_only_reason, None);
    assert!(during.hits[0].matched_by.contains(&"text"), "{during:?}");
    // The backfill embeds the entries stored before the download, in the background.
    let status = loop {
        let status = h.runtime.embedding_status().await.unwrap();
        if status.entries_without_vector == 0 && !status.backfilling {
            break status;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(300),
            "the backfill did not finish: {status:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    eprintln!(
        "backfill: 71 entries embedded {:.2} s after the download returned; a search during \
         it took {search_secs:.2} s",
        embedded_at.elapsed().as_secs_f64()
    );
    assert!(status.active && status.model_present, "{status:?}");
    assert_eq!(status.model.as_deref(), Some("all-MiniLM-L6-v2 (local)"));
    // The memory stored before the model existed is now found by meaning alone.
    let found = h
        .runtime
        .search_memory("puppy playing fetch outside", 3)
        .await
        .unwrap();
    assert_eq!(
        found.hits[0].content,
        "My dog loves chasing tennis balls in the park"
    );
    assert_eq!(found.hits[0].matched_by, vec!["vector"]);
    let (_, again) = h
        .runtime
        .download_embedding_model(Some(&base))
        .await
        .unwrap();
    assert!(!again, "files in place are not downloaded again");
    assert_eq!(hits.lock().unwrap().len(), 3);

    // New entries get their vector when they are stored.
    h.runtime
        .archive_memories(
            None,
            "import",
            &["Our cat naps on the warm windowsill".into()],
        )
        .await
        .unwrap();
    let after = h
        .runtime
        .search_memory("kitten sleeping in the sun", 3)
        .await
        .unwrap();
    assert_eq!(after.text_only_reason, None);
    assert_eq!(after.hits[0].content, "Our cat naps on the warm windowsill");

    let err = h
        .runtime
        .download_embedding_model(Some(&format!("{base}/missing")))
        .await;
    assert!(
        err.is_ok(),
        "nothing is fetched when the files are in place"
    );
}

#[tokio::test]
async fn the_end_of_a_chat_is_summarized_into_archival_memory() {
    let server = ScriptedServer::start(vec![
        Turn::text("Noted: the release is due Friday."),
        Turn::text("Mira's release is due Friday; she wants metric units in the notes."),
    ])
    .await;
    let h = harness(&server, PermissionMode::Default, false).await;
    let chat = h.chat().await;
    assert_eq!(
        h.runtime.archive_chat_summary(&chat).await.unwrap(),
        None,
        "nothing to summarize yet"
    );
    h.runtime
        .send_message(
            &chat,
            "Our release is due Friday, use metric units",
            RunOptions::default(),
        )
        .await
        .unwrap();
    let id = h
        .runtime
        .archive_chat_summary(&chat)
        .await
        .unwrap()
        .unwrap();
    let request = server.requests()[1].clone();
    assert!(system_prompt(&request).starts_with("Summarize the following conversation"));
    let sent = request["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        sent,
        "User: Our release is due Friday, use metric units\n\nAssistant: Noted: the release is due Friday.\n\n"
    );
    let found = h.runtime.search_memory("release Friday", 3).await.unwrap();
    assert_eq!(found.hits[0].id, id);
    assert_eq!(
        found.hits[0].content,
        "Summary of chat 'Our release is due Friday, use metric units': Mira's release is due Friday; she wants metric units in the notes."
    );
}

#[tokio::test]
async fn a_provider_embedding_model_replaces_the_local_one_once_chosen() {
    // An OpenAI-compatible /embeddings endpoint: "dog"-like texts point one way, the rest another.
    let seen = Arc::new(std::sync::Mutex::new(
        Vec::<(String, serde_json::Value)>::new(),
    ));
    let log = Arc::clone(&seen);
    let app = axum::Router::new().route(
        "/v1/embeddings",
        axum::routing::post(
            move |headers: axum::http::HeaderMap,
                  axum::Json(body): axum::Json<serde_json::Value>| {
                let log = Arc::clone(&log);
                async move {
                    let auth = headers
                        .get("authorization")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default()
                        .to_string();
                    log.lock().unwrap().push((auth, body.clone()));
                    let data: Vec<serde_json::Value> = body["input"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .enumerate()
                        .map(|(i, t)| {
                            let t = t.as_str().unwrap();
                            let v = if t.contains("dog") || t.contains("puppy") {
                                [3.0, 0.0, 0.0]
                            } else {
                                [0.0, 2.0, 0.5]
                            };
                            serde_json::json!({"object": "embedding", "index": i, "embedding": v})
                        })
                        .collect();
                    axum::Json(serde_json::json!({"object": "list", "data": data,
                        "model": body["model"], "usage": {"prompt_tokens": 4, "total_tokens": 4}}))
                }
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.ok() });

    let server = ScriptedServer::start(vec![]).await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.providers.openai.base_url = Some(format!("{base}/v1"));
    let runtime = Runtime::open(RuntimeOptions {
        paths: Paths::under(&home(dir.path())),
        keys: Arc::new(StaticKeys::new().with("openai", "sk-embed")),
        config: Some(config),
    })
    .await
    .unwrap();
    drop(server);
    let err = runtime
        .set_embedding_provider(Some("anthropic/claude-x"))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("OpenAI-compatible endpoints"), "{err}");
    runtime
        .set_embedding_provider(Some("openai/text-embedding-3-small"))
        .await
        .unwrap();
    runtime
        .archive_memories(
            None,
            "import",
            &[
                "My dog loves the park".into(),
                "Taxes are due in April".into(),
            ],
        )
        .await
        .unwrap();
    let found = runtime
        .search_memory("puppy playing fetch", 1)
        .await
        .unwrap();
    assert_eq!(found.text_only_reason, None);
    assert_eq!(found.hits[0].content, "My dog loves the park");
    assert_eq!(found.hits[0].matched_by, vec!["vector"]);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen[0].0, "Bearer sk-embed");
    assert_eq!(
        seen[0].1,
        serde_json::json!({"model": "text-embedding-3-small",
            "input": ["My dog loves the park", "Taxes are due in April"]})
    );
}

#[tokio::test]
async fn a_memory_search_without_words_or_with_a_bad_limit_is_refused_naming_the_field() {
    let server = ScriptedServer::start(vec![]).await;
    let h = harness(&server, PermissionMode::Default, false).await;
    for (query, limit, field) in [("  ", 3, "query"), ("x", 0, "limit"), ("x", 51, "limit")] {
        match h.runtime.search_memory(query, limit).await {
            Err(suzent_runtime::RuntimeError::InvalidInput { field: f, .. }) => {
                assert_eq!(f, field, "{query:?} {limit}")
            }
            other => panic!("{query:?} {limit}: {other:?}"),
        }
    }
}
