//! Suzent's loopback server: the bridge between the Suzent browser extension (Chrome, Edge) and
//! the app. It binds 127.0.0.1 only, and every route checks the `Host` header (DNS rebinding),
//! the `Origin` (only `chrome-extension://<id>`; a web page or a process without `Origin` gets
//! 403 before the WebSocket upgrade) and, after the hello, a credential bound to the paired
//! extension's id, of which only the SHA-256 is stored. No CORS headers are ever sent.
//!
//! It holds no agent logic: a live extension connection becomes the runtime's `extension`
//! browser backend, and commands come from browser-core's session.
//!
//! ```no_run
//! # async fn demo(runtime: suzent_runtime::Runtime) -> Result<(), suzent_server::ServerError> {
//! let server = suzent_server::BridgeServer::start(&runtime, suzent_server::BridgeOptions::default()).await?;
//! println!("browser bridge on 127.0.0.1:{}", server.port());
//! for request in server.pairings().pending() {
//!     println!("{} from {} shows code {}", request.extension_id, request.browser, request.code);
//! }
//! server.stop().await;
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod bridge;
mod extension_backend;
mod guard;
pub mod native_host;
mod package;
mod pairing;
pub mod protocol;
mod status;

pub use bridge::{COMMAND_TIMEOUT, ExtensionLink, HELLO_TIMEOUT, Hub, LinkError, LinksChanged};
pub use extension_backend::{ExtensionBackend, function_name};
pub use guard::{Refusal, check_host, check_origin, extension_id_of_origin, is_extension_id};
pub use native_host::{HOST_NAME, HostInstall, NativeHostPlan};
pub use package::{
    PackageError, SHIPPED_EXTENSION_ID, extension_version, extension_zip, save_zip,
    unpacked_extension,
};
pub use pairing::{
    CREDENTIAL_PREFIX, LiveConnection, MAX_PENDING, PAIRING_TIMEOUT, PairingError, PairingOutcome,
    PairingRequest, Pairings, credential_hash,
};
pub use status::{
    BridgeState, BrowserPairingStatus, BrowserStatus, bridge_state_file, offline_status,
};
pub use suzent_store::BrowserPairing;

use axum::Router;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{Extension, State};
use axum::response::Response;
use serde::{Deserialize, Serialize};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use suzent_runtime::{AuditLog, Paths, Runtime};
use suzent_store::Store;
use tokio::net::TcpListener;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

/// The port the bridge tries first when it has none from an earlier start.
pub const DEFAULT_PORT: u16 = 17345;

/// Environment variable that fixes the port (`0`: any free port).
pub const PORT_ENV: &str = "SUZENT_BROWSER_PORT";

/// How often a running bridge looks for pairings revoked by another process and refreshes its
/// state file.
pub const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// Something that happened on the bridge, for the app's UI (pairing dialog, Settings → Browser).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum BridgeEvent {
    /// An extension asks to pair: show the approval dialog.
    PairingRequested {
        /// The request.
        request: PairingRequest,
    },
    /// A pairing request ended.
    PairingResolved {
        /// Its id.
        request_id: String,
        /// How.
        outcome: PairingOutcome,
    },
    /// A paired extension connected.
    Connected {
        /// The pairing.
        pairing_id: String,
        /// Its browser.
        browser: String,
    },
    /// A paired extension disconnected.
    Disconnected {
        /// The pairing.
        pairing_id: String,
    },
    /// A pairing was revoked (its connection is closed).
    Revoked {
        /// The pairing.
        pairing_id: String,
    },
    /// The user shared or unshared tabs.
    TabsChanged {
        /// The pairing.
        pairing_id: String,
        /// How many tabs are shared now.
        shared: u32,
    },
}

/// Which port to listen on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PortChoice {
    /// `SUZENT_BROWSER_PORT` if set, else the port of the last start if free, else
    /// [`DEFAULT_PORT`] if free, else any free port (the extension finds it through the
    /// native messaging host).
    #[default]
    Stable,
    /// This port or fail.
    Fixed(u16),
    /// Any free port (tests).
    Any,
}

/// How to start the bridge.
#[derive(Debug, Clone, Default)]
pub struct BridgeOptions {
    /// Which port.
    pub port: PortChoice,
    /// The name the popup shows ("connected to <device name>"); default: this computer's name.
    pub device_name: Option<String>,
    /// Where native messaging host manifests go; `None`: the current user's browsers
    /// ([`NativeHostPlan::for_this_user`]).
    pub native_hosts: Option<NativeHostPlan>,
    /// Do not install native messaging hosts at all.
    pub skip_native_hosts: bool,
}

/// Why the bridge could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The port could not be bound.
    #[error("cannot listen on 127.0.0.1:{port}: {message}")]
    Bind {
        /// The port.
        port: u16,
        /// The OS error.
        message: String,
    },
    /// `SUZENT_BROWSER_PORT` is not a port number.
    #[error("{PORT_ENV}='{0}' is not a port number")]
    BadPort(String),
    /// The database could not be opened.
    #[error(transparent)]
    Store(#[from] suzent_store::StoreError),
    /// A pairing call failed.
    #[error(transparent)]
    Pairing(#[from] PairingError),
}

/// The running bridge. Dropping it does not stop it; call [`BridgeServer::stop`].
#[derive(Debug)]
pub struct BridgeServer {
    hub: Arc<Hub>,
    port: u16,
    paths: Paths,
    native_hosts: Option<NativeHostPlan>,
    task: tokio::task::JoinHandle<()>,
}

async fn bind(choice: PortChoice, last: Option<u16>) -> Result<TcpListener, ServerError> {
    let at = |port: u16| SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let fixed = match std::env::var(PORT_ENV) {
        Ok(v) if !v.trim().is_empty() && choice == PortChoice::Stable => Some(
            v.trim()
                .parse::<u16>()
                .map_err(|_| ServerError::BadPort(v.clone()))?,
        ),
        _ => None,
    };
    let exact = match (choice, fixed) {
        (_, Some(p)) => Some(p),
        (PortChoice::Fixed(p), None) => Some(p),
        (PortChoice::Any, None) => Some(0),
        (PortChoice::Stable, None) => None,
    };
    if let Some(port) = exact {
        return TcpListener::bind(at(port))
            .await
            .map_err(|e| ServerError::Bind {
                port,
                message: e.to_string(),
            });
    }
    for port in last.into_iter().chain([DEFAULT_PORT]) {
        if let Ok(listener) = TcpListener::bind(at(port)).await {
            return Ok(listener);
        }
    }
    TcpListener::bind(at(0))
        .await
        .map_err(|e| ServerError::Bind {
            port: 0,
            message: e.to_string(),
        })
}

fn device_name() -> String {
    let name = whoami::devicename();
    if name.trim().is_empty() {
        "this computer".to_string()
    } else {
        name
    }
}

async fn bridge_route(
    ws: WebSocketUpgrade,
    Extension(origin): Extension<guard::ExtensionOrigin>,
    State(hub): State<Arc<Hub>>,
) -> Response {
    ws.max_message_size(protocol::MAX_FRAME_BYTES)
        .max_frame_size(protocol::MAX_FRAME_BYTES)
        .on_upgrade(move |socket| bridge::serve_connection(socket, origin.0, hub))
}

impl BridgeServer {
    /// Starts the bridge for `runtime`: opens the pairing store, binds 127.0.0.1, writes the
    /// port where the extension finds it (native messaging hosts) and serves until
    /// [`BridgeServer::stop`].
    ///
    /// Errors: [`ServerError`].
    pub async fn start(
        runtime: &Runtime,
        options: BridgeOptions,
    ) -> Result<BridgeServer, ServerError> {
        let store = Store::open(&runtime.paths().database()).await?;
        let server = BridgeServer::start_with(
            runtime.paths().clone(),
            store,
            Some(runtime.audit_log()),
            options,
        )
        .await?;
        // The runtime's extension mode drives the paired extension through this bridge (it
        // answers "no browser extension is connected" while no paired extension is).
        runtime
            .browser()
            .connect_extension(Arc::new(server.backend()));
        Ok(server)
    }

    /// Starts the bridge on an open store (what [`BridgeServer::start`] does after opening it).
    ///
    /// Errors: [`ServerError`].
    pub async fn start_with(
        paths: Paths,
        store: Store,
        audit: Option<AuditLog>,
        options: BridgeOptions,
    ) -> Result<BridgeServer, ServerError> {
        let state_file = bridge_state_file(&paths.data_dir);
        let last = status::read_state(&state_file).map(|s| s.port);
        let listener = bind(options.port, last).await?;
        let port = listener
            .local_addr()
            .map_err(|e| ServerError::Bind {
                port: 0,
                message: e.to_string(),
            })?
            .port();
        let (events, _) = broadcast::channel(256);
        let shutdown = CancellationToken::new();
        let pairings = Arc::new(Pairings::new(
            store,
            audit,
            SHIPPED_EXTENSION_ID.to_string(),
            events.clone(),
        ));
        let hub = Arc::new(Hub::new(
            Arc::clone(&pairings),
            options.device_name.clone().unwrap_or_else(device_name),
            events,
            shutdown.clone(),
        ));
        let native_hosts = if options.skip_native_hosts {
            None
        } else {
            Some(
                options
                    .native_hosts
                    .clone()
                    .unwrap_or_else(|| NativeHostPlan::for_this_user(&paths.data_dir)),
            )
        };
        let router = Router::new()
            .route(protocol::BRIDGE_PATH, axum::routing::any(bridge_route))
            .fallback(|| async { (axum::http::StatusCode::NOT_FOUND, "not found\n") })
            .with_state(Arc::clone(&hub))
            .layer(axum::middleware::from_fn_with_state(port, guard::guard));
        let server = axum::serve(listener, router.into_make_service())
            .with_graceful_shutdown(shutdown.clone().cancelled_owned());
        let poll_hub = Arc::clone(&hub);
        let poll_paths = paths.clone();
        let task = tokio::spawn(async move {
            let poller = async {
                loop {
                    if let Err(e) = poll_hub.pairings.close_revoked_elsewhere().await {
                        tracing::warn!("browser bridge cannot check revocations: {e}");
                    }
                    status::write_state(&poll_paths.data_dir, port, &poll_hub.pairings.live());
                    tokio::time::sleep(POLL_INTERVAL).await;
                }
            };
            tokio::select! {
                served = server => if let Err(e) = served {
                    tracing::error!("the browser bridge stopped: {e}");
                },
                () = poller => {}
            }
            status::clear_state(&poll_paths.data_dir, port);
        });
        let server = BridgeServer {
            hub,
            port,
            paths,
            native_hosts,
            task,
        };
        server.refresh_native_hosts().await;
        tracing::info!("browser bridge listening on 127.0.0.1:{port}");
        Ok(server)
    }

    /// The port it listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The pairing service (pending requests, approve, reject, revoke, list).
    pub fn pairings(&self) -> &Pairings {
        &self.hub.pairings
    }

    /// The connection hub (live links; the extension backend sends commands through it).
    pub fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }

    /// The `extension` browser backend over this bridge (commands go to the live link).
    pub fn backend(&self) -> ExtensionBackend {
        ExtensionBackend::new(Arc::clone(&self.hub))
    }

    /// Bridge events from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<BridgeEvent> {
        self.hub.events.subscribe()
    }

    /// Approves a pairing request, then rewrites the native host manifests so that they allow
    /// the newly paired extension.
    ///
    /// Errors: [`PairingError`].
    pub async fn approve(&self, request_id: &str) -> Result<BrowserPairing, PairingError> {
        let pairing = self.hub.pairings.approve(request_id).await?;
        self.refresh_native_hosts().await;
        Ok(pairing)
    }

    /// Declines a pairing request.
    ///
    /// Errors: [`PairingError::UnknownRequest`].
    pub async fn reject(&self, request_id: &str) -> Result<(), PairingError> {
        self.hub.pairings.reject(request_id).await
    }

    /// Revokes a pairing (closing its live connection now) and rewrites the native host
    /// manifests without it.
    ///
    /// Errors: [`PairingError`].
    pub async fn revoke(&self, pairing_id: &str) -> Result<bool, PairingError> {
        let changed = self.hub.pairings.revoke(pairing_id).await?;
        self.refresh_native_hosts().await;
        Ok(changed)
    }

    /// Status for Settings → Browser and `suzent browser status`.
    ///
    /// Errors: [`PairingError::Store`].
    pub async fn status(&self) -> Result<BrowserStatus, PairingError> {
        status::build(
            Some(self.port),
            &self.hub.pairings.list(true).await?,
            &self.hub.pairings.live(),
            self.hub.pairings.pending(),
            self.native_host_dirs(),
        )
    }

    fn native_host_dirs(&self) -> Vec<String> {
        self.native_hosts
            .as_ref()
            .map(|p| {
                p.browsers
                    .iter()
                    .filter(|(_, profile, _)| profile.is_dir() || cfg!(windows))
                    .map(|(name, _, _)| name.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Writes the native messaging host manifests: allowed are the paired extensions, or the
    /// shipped extension while nothing is paired.
    async fn refresh_native_hosts(&self) {
        let Some(plan) = &self.native_hosts else {
            return;
        };
        let mut ids: Vec<String> = match self.hub.pairings.list(false).await {
            Ok(list) => list.into_iter().map(|p| p.extension_id).collect(),
            Err(e) => {
                tracing::warn!("cannot list pairings for the native host manifests: {e}");
                return;
            }
        };
        if ids.is_empty() {
            ids.push(SHIPPED_EXTENSION_ID.to_string());
        }
        ids.sort();
        ids.dedup();
        if let Err(e) = native_host::install(plan, self.port, &ids) {
            tracing::warn!("cannot install the native messaging host: {e}");
        }
    }

    /// The data directory's browser folder.
    pub fn browser_dir(&self) -> PathBuf {
        self.paths.data_dir.join("browser")
    }

    /// Stops accepting, closes every connection (1001) and waits for the server task.
    pub async fn stop(self) {
        self.hub.shutdown.cancel();
        let _ = self.task.await;
    }
}
