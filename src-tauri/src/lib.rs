//! Suzent's desktop shell: Tauri typed commands and one typed event over `suzent-runtime`.
//!
//! The shell holds no agent logic. Each command (see [`commands`]) maps onto one
//! [`suzent_runtime::Runtime`] call and returns `Result<T, AppError>`; every runtime event goes to
//! the webview as a [`RuntimeEvent`]. The TypeScript bindings in `ui/src/bindings.ts` are
//! generated from these signatures by [`export_bindings`] (`cargo run -p suzent-desktop --example
//! gen-bindings`), and a test fails when the checked-in file is out of date.
#![deny(missing_docs)]

mod audio;
mod browser;
pub mod channel_commands;
pub mod cli_tool;
pub mod commands;
pub mod deep_links;
pub mod device_commands;
mod dto;
mod error;
mod events;
mod frames;
pub mod instance;
mod state;
pub mod tray;
pub mod updates;

pub use browser::{BrowserBridge, BrowserBridgeEvent};
pub use dto::{CreateChatArgs, LogFile, MemoryBlock, ModelDownload, RunSummary};
pub use error::{AppError, AppErrorKind};
pub use events::{RuntimeEvent, forward_events};
pub use frames::{FRAME_CSP, FRAME_SCHEME, HtmlFrames, MAX_FRAME_BYTES, MAX_FRAMES};
pub use state::AppState;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use suzent_runtime::provider::EnvAndKeychain;
use suzent_runtime::{Runtime, RuntimeOptions, SessionKeys};
use tauri::Manager;

mod navigation;
pub mod rendering;
mod scheme;
pub use navigation::{NavigationVerdict, navigation_verdict};

/// Where the checked-in bindings live, relative to the repository root.
pub const BINDINGS_PATH: &str = "ui/src/bindings.ts";

/// The tauri-specta builder with every command and the event of the desktop contract.
pub fn specta_builder() -> tauri_specta::Builder<tauri::Wry> {
    use channel_commands::*;
    use commands::*;
    use device_commands::*;
    tauri_specta::Builder::<tauri::Wry>::new()
        .commands(tauri_specta::collect_commands![
            list_chats,
            search_chats,
            chat_notes,
            create_chat,
            rename_chat,
            delete_chat,
            get_messages,
            send_message,
            add_attachment,
            retry_turn,
            compact_chat,
            chat_compactions,
            resume_approvals,
            pending_approvals,
            cancel_run,
            set_chat_mode,
            chat_browser_mode,
            set_chat_browser_mode,
            set_chat_tools,
            get_catalog,
            get_settings,
            save_settings,
            set_api_key,
            delete_api_key,
            list_rules,
            add_rule,
            delete_rule,
            read_audit_log,
            explain_permission,
            pick_workspace::<tauri::Wry>,
            background_tasks,
            stop_background_task,
            mcp_servers,
            mcp_tools,
            add_mcp_server,
            remove_mcp_server,
            set_mcp_server_enabled,
            set_mcp_server_trusted,
            test_mcp_server,
            refresh_mcp_server,
            import_mcp_servers,
            get_plan,
            memory_blocks,
            set_memory_block,
            search_memory,
            embedding_status,
            download_embedding_model,
            list_skills,
            set_skill_enabled,
            list_surfaces,
            submit_surface_action,
            delete_surface,
            stage_html_frame,
            local_models,
            pull_local_model::<tauri::Wry>,
            import_local_model::<tauri::Wry>,
            remove_local_model,
            use_local_model,
            provider_keys,
            set_session_key,
            list_models,
            test_connection,
            set_chat_model,
            log_file,
            open_log_folder::<tauri::Wry>,
            this_device,
            list_devices,
            nearby_devices,
            start_pairing,
            pairing_status,
            confirm_pairing,
            cancel_pairing,
            join_device,
            finish_join,
            rename_device,
            set_device_scope,
            revoke_device,
            device_outbox,
            list_channels,
            test_channel,
            add_channel,
            set_channel_token,
            set_channel_allowed_users,
            set_channel_enabled,
            set_channel_profile,
            remove_channel,
            channel_requests,
            approve_channel_request,
            dismiss_channel_request,
            list_schedules,
            save_schedule,
            remove_schedule,
            pause_schedule,
            run_schedule_now,
            schedule_history,
            preview_schedule,
            scheduler_status,
            system_timezone,
            chat_heartbeat,
            set_chat_heartbeat,
            quiet_turns,
            chat_goal,
            start_goal,
            pause_goal,
            resume_goal,
            clear_goal,
            browser::browser_status,
            browser::approve_browser_pairing,
            browser::reject_browser_pairing,
            browser::revoke_browser_pairing,
            browser::save_browser_extension_zip::<tauri::Wry>,
            browser::show_browser_extension_folder,
            deep_links::deep_link_inbox,
            deep_links::confirm_mcp_install::<tauri::Wry>,
            deep_links::cancel_mcp_install::<tauri::Wry>,
            updates::update_status,
            updates::check_for_update::<tauri::Wry>,
            updates::download_update::<tauri::Wry>,
            updates::restart_to_update::<tauri::Wry>,
            updates::desktop_prefs,
            updates::save_desktop_prefs,
            tray::tray_status,
            tray::autostart_enabled::<tauri::Wry>,
            tray::set_autostart::<tauri::Wry>,
            cli_tool::cli_tool_status,
            cli_tool::install_cli_tool,
        ])
        .events(tauri_specta::collect_events![
            RuntimeEvent,
            BrowserBridgeEvent,
            events::LocalModelProgress,
            deep_links::DeepLinkReceived,
            updates::UpdateStatusChanged
        ])
        // The output of a `speak` call (a tool result, so no command names the type): the tool
        // card parses it to show the player.
        .typ::<suzent_core::SpeechClip>()
        // One TypeScript type per Rust type (no `_Serialize`/`_Deserialize` pairs): the UI reads
        // what Rust serializes and sends what Rust deserializes, and the two shapes only differ
        // by fields that are omitted when empty (typed as optional).
        .disable_serde_phases()
        // Millisecond durations, byte counts and transcript positions stay far below 2^53.
        .dangerously_cast_bigints_to_number()
}

/// Writes the TypeScript bindings to `path`.
pub fn export_bindings(path: &Path) -> Result<(), String> {
    let header = "// Generated by `cargo run -p suzent-desktop --example gen-bindings` from the Rust \
                  commands and types. Do not edit by hand.\n";
    specta_builder()
        .export(
            specta_typescript::Typescript::default().header(header),
            path,
        )
        .map_err(|e| format!("cannot export the bindings to {}: {e}", path.display()))
}

/// Starts the desktop app and blocks until it exits. `log_dir` is the folder of the rotating log
/// file when file logging started (Settings links to it).
pub fn run(log_dir: Option<PathBuf>) -> Result<(), String> {
    let builder = specta_builder();
    let invoke = builder.invoke_handler();
    let context = tauri::generate_context!("../tauri.conf.json");
    let paths = suzent_runtime::Paths::from_env()?;
    let instance = instance::instance_id(&context.config().identifier, &paths.data_dir);
    tauri::Builder::default()
        // First: a second launch on this data folder hands its argv (a `suzent://` link) to the
        // running app and exits here, inside Tauri's plugin setup, before the app's `setup`
        // below opens the database, binds a port or starts the scheduler (R2-D05).
        .plugin(
            tauri_plugin_single_instance::Builder::new()
                .dbus_id(instance)
                .callback(|app, _args, _cwd| {
                    // The deep-link plugin already took the argv's link (the `deep-link`
                    // feature); a plain second launch only brings the window forward.
                    if let Some(window) = app.get_webview_window("main") {
                        let _ = window.unminimize();
                        let _ = window.show();
                        let _ = window.set_focus();
                    }
                })
                .build(),
        )
        // Second: the data folder's own lock, for a launch the first could not route.
        .plugin(instance::data_dir_lock(paths.data_dir.clone()))
        .plugin(tauri_plugin_deep_link::init())
        .manage(suzent_runtime::deep_link::DeepLinkInbox::new())
        .plugin(tauri_plugin_updater::Builder::new().build())
        // Start at login: off until the user turns it on in Settings → Desktop.
        .plugin(tauri_plugin_autostart::init(
            tauri_plugin_autostart::MacosLauncher::LaunchAgent,
            None,
        ))
        .manage(tray::Tray::<tauri::Wry>::default())
        // Closing the main window keeps Suzent in the tray while it is needed (see `tray`).
        .on_window_event(|window, event| {
            if let tauri::WindowEvent::CloseRequested { api, .. } = event
                && window.label() == "main"
                && tray::keep_running_on_close(window.app_handle())
            {
                api.prevent_close();
            }
        })
        .manage(updates::Updates::new(
            suzent_runtime::desktop_prefs::DesktopPrefsFile::in_config_dir(&paths.config_dir),
            context.package_info().version.to_string(),
        ))
        .plugin(tauri_plugin_dialog::init())
        // Used from Rust only (links opened in the system browser, the log folder); the webview
        // is granted none of its commands.
        .plugin(tauri_plugin_opener::init())
        // The main window never leaves the app: other origins open in the system browser.
        .plugin(navigation::guard())
        .plugin(tauri_plugin_notification::init())
        // Canvas `HtmlFrame` documents: served from their own scheme with their own CSP, so the
        // app's CSP stays strict (see `frames`).
        .manage(HtmlFrames::default())
        .register_uri_scheme_protocol(FRAME_SCHEME, |ctx, request| {
            ctx.app_handle().state::<HtmlFrames>().respond(&request)
        })
        // Speech clips of `speak` for the tool card's player: read off the UI thread (see
        // `audio`); only clips the runtime stored are served.
        .register_asynchronous_uri_scheme_protocol(audio::AUDIO_SCHEME, |ctx, request, responder| {
            let runtime = ctx
                .app_handle()
                .try_state::<AppState>()
                .map(|s| s.runtime());
            tauri::async_runtime::spawn_blocking(move || {
                let response = audio::respond(&request, |chat, file| match &runtime {
                    Some(Ok(runtime)) => runtime
                        .speech_clip_path(chat, file)
                        .map_err(|e| e.to_string()),
                    Some(Err(e)) => Err(e.message.clone()),
                    None => Err("the app is still starting".into()),
                });
                responder.respond(response);
            });
        })
        .invoke_handler(invoke)
        .setup(move |app| {
            builder.mount_events(app);
            let keys = Arc::new(SessionKeys::new(Arc::new(EnvAndKeychain)));
            let state = match tauri::async_runtime::block_on(open_runtime(Arc::clone(&keys))) {
                Ok(runtime) => {
                    forward_events(app.handle().clone(), &runtime);
                    // The inbox dispatcher wakes idle agents (finished background commands,
                    // agent messages, sub-agent reports); it runs for the life of the app.
                    let dispatcher = runtime.clone();
                    tauri::async_runtime::spawn(async move { dispatcher.start_dispatcher() });
                    // Paired devices: the endpoint and its loops (outbox, receipts, revocations),
                    // only when a device is paired; pairing starts them otherwise.
                    let devices = runtime.clone();
                    tauri::async_runtime::spawn(async move {
                        if let Err(e) = devices.devices().start_if_paired().await {
                            tracing::warn!("paired devices are unavailable: {e}");
                        }
                    });
                    // Scheduled jobs, heartbeats, dreams and goals: this app schedules unless
                    // another process (`suzent serve`) already does.
                    let unattended = runtime.clone();
                    tauri::async_runtime::spawn(async move {
                        let status = unattended.start_unattended().await;
                        if let Some(h) = status.holder.filter(|_| !status.scheduling) {
                            tracing::info!("another process (pid {} on {}) schedules the jobs; this app does not", h.pid, h.host);
                        }
                    });
                    // The browser extension's bridge on 127.0.0.1 (Settings → Browser).
                    let bridge = tauri::async_runtime::block_on(BrowserBridge::start(
                        app.handle().clone(),
                        &runtime,
                    ));
                    app.manage(bridge);
                    AppState::new(runtime, keys, log_dir.clone())
                }
                Err(message) => {
                    tracing::error!("the runtime could not start: {message}");
                    app.manage(BrowserBridge::failed(message.clone()));
                    AppState::failed(message, keys, log_dir.clone())
                }
            };
            app.manage(state);
            // After the state: a link the app was started with is shown by a ready window.
            deep_links::start(app.handle());
            // The tray icon and its counts.
            let runtime = app.state::<AppState>().runtime().ok();
            tray::start(app.handle(), runtime);
            // Update checks at start and daily (when on in Settings → Updates).
            updates::start(app.handle());
            Ok(())
        })
        .build(context)
        .map_err(|e| format!("the desktop app failed to start: {e}"))?
        .run(|app, event| {
            // A verified update is installed as the app quits ("install on restart").
            if let tauri::RunEvent::Exit = event {
                app.state::<updates::Updates>().install_ready();
            }
        });
    Ok(())
}

async fn open_runtime(keys: Arc<SessionKeys>) -> Result<Runtime, String> {
    let mut options = RuntimeOptions::from_env().map_err(|e| e.to_string())?;
    options.keys = keys;
    Runtime::open(options).await.map_err(|e| e.to_string())
}
