//! Tauri's build step: the configuration lives at the repository root, and every app command
//! gets generated `allow-<command>` permissions that `capabilities/` grants one by one.

use std::path::Path;

/// The app commands (must match `specta_builder` in src/lib.rs).
const COMMANDS: &[&str] = &[
    "list_chats",
    "search_chats",
    "chat_notes",
    "create_chat",
    "rename_chat",
    "delete_chat",
    "get_messages",
    "send_message",
    "add_attachment",
    "resume_approvals",
    "pending_approvals",
    "cancel_run",
    "set_chat_mode",
    "chat_browser_mode",
    "set_chat_browser_mode",
    "set_chat_tools",
    "get_catalog",
    "get_settings",
    "save_settings",
    "set_api_key",
    "delete_api_key",
    "list_rules",
    "add_rule",
    "delete_rule",
    "read_audit_log",
    "explain_permission",
    "pick_workspace",
    "background_tasks",
    "stop_background_task",
    "mcp_servers",
    "mcp_tools",
    "add_mcp_server",
    "remove_mcp_server",
    "set_mcp_server_enabled",
    "set_mcp_server_trusted",
    "test_mcp_server",
    "refresh_mcp_server",
    "import_mcp_servers",
    "get_plan",
    "memory_blocks",
    "set_memory_block",
    "search_memory",
    "embedding_status",
    "download_embedding_model",
    "list_skills",
    "set_skill_enabled",
    "list_surfaces",
    "submit_surface_action",
    "delete_surface",
    "stage_html_frame",
    "local_models",
    "pull_local_model",
    "import_local_model",
    "remove_local_model",
    "use_local_model",
    "provider_keys",
    "set_session_key",
    "list_models",
    "test_connection",
    "set_chat_model",
    "retry_turn",
    "compact_chat",
    "chat_compactions",
    "log_file",
    "open_log_folder",
    "this_device",
    "list_devices",
    "nearby_devices",
    "start_pairing",
    "pairing_status",
    "confirm_pairing",
    "cancel_pairing",
    "join_device",
    "finish_join",
    "rename_device",
    "set_device_scope",
    "revoke_device",
    "device_outbox",
    "list_channels",
    "test_channel",
    "add_channel",
    "set_channel_token",
    "set_channel_allowed_users",
    "set_channel_enabled",
    "set_channel_profile",
    "remove_channel",
    "channel_requests",
    "approve_channel_request",
    "dismiss_channel_request",
    "list_schedules",
    "save_schedule",
    "remove_schedule",
    "pause_schedule",
    "run_schedule_now",
    "schedule_history",
    "preview_schedule",
    "scheduler_status",
    "system_timezone",
    "chat_heartbeat",
    "set_chat_heartbeat",
    "quiet_turns",
    "chat_goal",
    "start_goal",
    "pause_goal",
    "resume_goal",
    "clear_goal",
    "browser_status",
    "approve_browser_pairing",
    "reject_browser_pairing",
    "revoke_browser_pairing",
    "save_browser_extension_zip",
    "show_browser_extension_folder",
    "deep_link_inbox",
    "confirm_mcp_install",
    "cancel_mcp_install",
    "update_status",
    "check_for_update",
    "download_update",
    "restart_to_update",
    "desktop_prefs",
    "save_desktop_prefs",
    "tray_status",
    "autostart_enabled",
    "set_autostart",
    "cli_tool_status",
    "install_cli_tool",
];

fn main() {
    // `generate_context!` needs the built UI. When it was not built yet (a plain `cargo build`
    // or `cargo test` of the workspace), a page saying how to build it stands in, so headless
    // work never depends on npm; `scripts/run` and `scripts/test` build the real UI first.
    let dist = Path::new("../ui/dist");
    if !dist.join("index.html").exists() {
        let page = "<!doctype html><html><head><meta charset=\"utf-8\"><title>Suzent</title></head>\
                    <body><h1>Suzent</h1><p>The UI is not built. Run <code>npm --prefix ui ci &amp;&amp; \
                    npm --prefix ui run build</code>, then build the app again (or use \
                    <code>./scripts/run</code>).</p></body></html>\n";
        if let Err(e) = std::fs::create_dir_all(dist)
            .and_then(|()| std::fs::write(dist.join("index.html"), page))
        {
            println!("cargo:warning=cannot create a placeholder ui/dist: {e}");
        }
    }
    println!("cargo:rerun-if-changed=../ui/dist");
    println!("cargo:rerun-if-changed=../tauri.conf.json");
    println!("cargo:rerun-if-changed=capabilities");
    let attributes = tauri_build::Attributes::new()
        .config_path("../tauri.conf.json")
        .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS));
    if let Err(e) = tauri_build::try_build(attributes) {
        println!("cargo:warning=tauri build step failed: {e:#}");
        std::process::exit(1);
    }
}
