//! Settings (view, validated atomic save) and reading the audit log back, through the runtime API.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use std::path::Path;
use std::sync::Arc;
use suzent_core::{Config, PermissionMode};
use suzent_runtime::provider::StaticKeys;
use suzent_runtime::{
    AuditFilter, Paths, ProviderSettings, ProvidersSettings, Runtime, RuntimeError, RuntimeOptions,
    SettingsPatch,
};

async fn open(home: &Path, keys: StaticKeys) -> Runtime {
    Runtime::open(RuntimeOptions {
        paths: Paths::under(home),
        keys: Arc::new(keys),
        config: None,
    })
    .await
    .expect("open the runtime")
}

fn write_config(home: &Path, text: &str) {
    let dir = Paths::under(home).config_dir;
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), text).unwrap();
}

#[tokio::test]
async fn settings_show_the_config_file_and_which_providers_have_a_key() {
    let home = tempfile::tempdir().unwrap();
    write_config(
        home.path(),
        "default_model = \"openai/gpt-4.1\"\ndefault_mode = \"auto\"\ntools = [\"ReadFileTool\", \"ShellTool\"]\n[providers.openai]\nbase_url = \"http://127.0.0.1:9/v1\"\n",
    );
    let runtime = open(home.path(), StaticKeys::new().with("anthropic", "sk-ant")).await;
    let s = runtime.settings();
    assert_eq!(s.default_model.as_deref(), Some("openai/gpt-4.1"));
    assert_eq!(s.default_mode, PermissionMode::Auto);
    assert_eq!(
        s.tools,
        [
            "read_file",
            "run_command",
            "start_command",
            "check_command",
            "stop_command"
        ]
    );
    assert_eq!(
        s.providers.openai.base_url.as_deref(),
        Some("http://127.0.0.1:9/v1")
    );
    assert_eq!(s.providers.gemini.base_url, None);
    assert_eq!(
        (s.keys.openai, s.keys.anthropic, s.keys.gemini),
        (false, true, false)
    );
    let serialized = serde_json::to_string(&s).unwrap();
    assert!(
        !serialized.contains("sk-ant"),
        "settings never carry a key: {serialized}"
    );
}

#[tokio::test]
async fn saved_settings_are_written_to_config_toml_and_used_by_the_runtime() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let runtime = open(home.path(), StaticKeys::new()).await;
    let saved = runtime
        .save_settings(SettingsPatch {
            default_model: Some("anthropic/claude-sonnet-4-5".into()),
            default_mode: Some(PermissionMode::FullAccess),
            tools: Some(vec!["read_file".into(), "GrepTool".into()]),
            workspace: Some(workspace.path().display().to_string()),
            max_steps: Some(7),
            providers: Some(ProvidersSettings {
                openai: ProviderSettings {
                    base_url: Some("http://127.0.0.1:1234/v1".into()),
                },
                ..Default::default()
            }),
            speech: Some(suzent_core::SpeechConfig {
                voice: Some(" en-gb ".into()),
                autoplay: true,
                ..Default::default()
            }),
        })
        .expect("save");
    assert_eq!(
        saved.speech,
        suzent_core::SpeechConfig {
            model: "system".into(),
            voice: Some("en-gb".into()),
            autoplay: true
        }
    );
    let expected = runtime
        .registry()
        .expand_selection(&["read_file".into(), "GrepTool".into()])
        .unwrap();
    assert_eq!(saved.tools, expected);
    assert_eq!(saved.max_steps, 7);

    // The file is complete, valid, and holds what was saved.
    let file = Paths::under(home.path()).config_file();
    let text = std::fs::read_to_string(&file).unwrap();
    let on_disk = Config::from_toml(&text, &file).expect("the written file parses");
    assert_eq!(on_disk, runtime.config());
    assert_eq!(
        on_disk.default_model.as_deref(),
        Some("anthropic/claude-sonnet-4-5")
    );
    assert_eq!(on_disk.default_mode, PermissionMode::FullAccess);
    assert_eq!(on_disk.workspace.as_deref(), Some(workspace.path()));
    // No temporary file is left beside it.
    let leftovers: Vec<_> = std::fs::read_dir(file.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert_eq!(leftovers, Vec::<String>::new());

    // New chats take the new defaults at once, without a restart.
    let chat = runtime
        .create_chat(suzent_runtime::CreateChat::default())
        .await
        .unwrap();
    assert_eq!(chat.mode, PermissionMode::FullAccess);
    assert_eq!(chat.model.as_deref(), Some("anthropic/claude-sonnet-4-5"));
    assert_eq!(
        Path::new(&chat.workspace),
        std::fs::canonicalize(workspace.path()).unwrap()
    );

    // A new process reads the same settings.
    drop(runtime);
    let reopened = open(home.path(), StaticKeys::new()).await;
    assert_eq!(reopened.settings().default_mode, PermissionMode::FullAccess);

    // An empty string clears an optional value.
    let cleared = reopened
        .save_settings(SettingsPatch {
            default_model: Some(String::new()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(cleared.default_model, None);
}

#[tokio::test]
async fn an_invalid_setting_is_an_error_naming_the_field_and_nothing_is_written() {
    let home = tempfile::tempdir().unwrap();
    let original = "default_model = \"openai/gpt-4.1\"\n";
    write_config(home.path(), original);
    let runtime = open(home.path(), StaticKeys::new()).await;
    let cases: Vec<(&str, SettingsPatch)> = vec![
        (
            "default_model",
            SettingsPatch {
                default_model: Some("gpt-4.1".into()),
                ..Default::default()
            },
        ),
        (
            "max_steps",
            SettingsPatch {
                max_steps: Some(0),
                ..Default::default()
            },
        ),
        (
            "tools",
            SettingsPatch {
                tools: Some(vec!["NoSuchTool".into()]),
                ..Default::default()
            },
        ),
        (
            "workspace",
            SettingsPatch {
                workspace: Some("/definitely/not/here".into()),
                ..Default::default()
            },
        ),
        (
            "providers.openai.base_url",
            SettingsPatch {
                providers: Some(ProvidersSettings {
                    openai: ProviderSettings {
                        base_url: Some("ftp://example.invalid".into()),
                    },
                    ..Default::default()
                }),
                ..Default::default()
            },
        ),
    ];
    for (field, patch) in cases {
        let err = runtime.save_settings(patch).unwrap_err();
        let named = match &err {
            RuntimeError::InvalidInput { field, .. } => field.clone(),
            RuntimeError::Config(suzent_core::ConfigError::Value { field, .. }) => field.clone(),
            other => panic!("unexpected error for {field}: {other:?}"),
        };
        assert_eq!(named, field, "{err}");
        let text = std::fs::read_to_string(Paths::under(home.path()).config_file()).unwrap();
        assert_eq!(text, original, "nothing written after a bad {field}");
        assert_eq!(
            runtime.config().default_model.as_deref(),
            Some("openai/gpt-4.1")
        );
    }
}

#[tokio::test]
async fn the_audit_log_reads_newest_first_with_filters_and_skips_broken_lines() {
    let home = tempfile::tempdir().unwrap();
    let runtime = open(home.path(), StaticKeys::new()).await;
    // A missing log is no entries.
    let empty = runtime
        .read_audit_log(AuditFilter {
            limit: 10,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!((empty.entries.len(), empty.skipped), (0, 0));

    let lines = [
        r#"{"timestamp":"2026-01-01T00:00:01Z","kind":"evaluation","chatId":"a","tool":"write_file","decision":"ask","risk":"medium","args":{"file_path":"x"}}"#,
        r#"{"timestamp":"2026-01-01T00:00:02Z","kind":"resolution","chatId":"a","tool":"write_file","userAction":"allow_session","ruleId":"r1"}"#,
        "this line is not json",
        r#"{"timestamp":"2026-01-01T00:00:03Z","kind":"evaluation","chatId":"b","tool":"read_file","decision":"allow","risk":"low","matchedRules":[{"id":"r9","tool":"read_file"}],"futureField":{"x":1}}"#,
        r#"{"timestamp":"2026-01-01T00:00:04Z","kind":"evaluation","chatId":"a","tool":"run_command","decision":"deny"}"#,
        r#"{"timestamp":"2026-01-01T00:00:05Z","kind":"evalu"#,
    ];
    let path = Paths::under(home.path()).audit_log();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // The two oldest lines were rotated into `permission-audit.1.jsonl`.
    std::fs::write(
        suzent_permissions::audit::rotated_path(&path, 1),
        lines[..2].join("\n"),
    )
    .unwrap();
    std::fs::write(&path, lines[2..].join("\n")).unwrap();

    let all = runtime
        .read_audit_log(AuditFilter {
            limit: 100,
            ..Default::default()
        })
        .await
        .unwrap();
    let times: Vec<_> = all.entries.iter().map(|e| &e.timestamp[17..19]).collect();
    assert_eq!(times, ["04", "03", "02", "01"]);
    assert_eq!(all.skipped, 2);
    assert_eq!(
        all.entries[3].args,
        Some(serde_json::json!({"file_path": "x"}))
    );
    assert_eq!(all.entries[1].matched_rules, ["r9"]);

    let chat_a = runtime
        .read_audit_log(AuditFilter {
            chat_id: Some("a".into()),
            tool: Some("write_file".into()),
            limit: 100,
            ..Default::default()
        })
        .await
        .unwrap();
    let kinds: Vec<_> = chat_a.entries.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds, ["resolution", "evaluation"]);

    let denied = runtime
        .read_audit_log(AuditFilter {
            decision: Some("deny".into()),
            limit: 100,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(denied.entries.len(), 1);
    assert_eq!(denied.entries[0].tool.as_deref(), Some("run_command"));

    let newest = runtime
        .read_audit_log(AuditFilter {
            limit: 1,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(newest.entries.len(), 1);
    assert_eq!(newest.entries[0].decision.as_deref(), Some("deny"));

    let err = runtime
        .read_audit_log(AuditFilter {
            limit: 0,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("limit"), "{err}");
}
