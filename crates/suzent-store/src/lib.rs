//! Suzent's SQLite store: one database file holding chats, their transcripts, tool steps,
//! pending approvals, permission rules and settings.
//!
//! - [`Store::open`] creates the file (and its directory), turns on WAL, `synchronous=NORMAL`,
//!   foreign keys and a 5 s busy timeout, then applies the migrations embedded from
//!   `migrations/`. Several processes may open the same file.
//! - Within a process every write goes through one writer connection, so writers queue on it
//!   instead of meeting in SQLite's lock (whose busy handler sleeps 1-100 ms between tries);
//!   reads use a pool of reader connections and see every committed write (WAL).
//! - Timestamps are stored as RFC 3339 UTC text with nine fractional digits; JSON columns are
//!   TEXT written by `serde_json`. A value that fails to decode is [`StoreError::Corrupt`].
//! - Every multi-statement write runs in one `BEGIN IMMEDIATE` transaction.
//! - Tool steps give at-most-once execution: [`Store::begin_tool_step`] marks a call as running
//!   before it runs, [`Store::finish_tool_step`] stores its result and marks it done atomically,
//!   and a unique index makes a second result for the same call impossible.
#![deny(missing_docs)]

mod approvals;
mod browser_pairings;
mod channels;
mod chats;
mod compactions;
mod connections;
mod consolidation;
mod devices;
mod error;
mod inbox;
mod mcp;
mod memory;
mod notes;
mod plans;
mod processes;
mod rules;
mod schedules;
mod search;
mod settings;
mod summaries;
mod surfaces;
mod transcript;
mod types;

pub use browser_pairings::{BrowserPairing, NewBrowserPairing};
pub use channels::{
    ChannelConversation, ChannelRequest, ChannelRequestStatus, NewChannelConversation,
};
pub use compactions::{CompactionRecord, NewCompaction};
pub use consolidation::{Consolidated, Merge};
pub use devices::{
    DeviceRecord, DeviceScope, DeviceState, NewDevice, NewPeerMessage, PeerMessage,
    PeerMessageStatus, UnreportedPeerMessage,
};
pub use error::StoreError;
pub use inbox::{
    AgentLink, BASE_BACKOFF, DEFAULT_MAX_ATTEMPTS, InboxMessage, InboxStatus, MAX_BACKOFF,
    NewInboxMessage, backoff,
};
pub use mcp::McpSchemaRow;
pub use memory::{
    ArchivalEntry, FtsHit, MEMORY_BLOCKS, NewArchival, UnembeddedEntry, decode_embedding, fts_query,
};
pub use notes::{
    ChatNotes, ToolCallNote, ToolResolutionNote, TurnFailureNote, TurnNote, TurnUsageNote,
};
pub use processes::{NewProcess, ProcessKind, ProcessRecord, ProcessStatus};
pub use schedules::{
    Claim, GoalRecord, JobDraft, JobRecord, LeaseHolder, LeaseOutcome, NewRun, RunEnd, RunRecord,
};
pub use search::{ChatSearchHit, MATCH_END, MATCH_START};
pub use summaries::{SUMMARY_SOURCE, SummaryDue, SummaryRecord};
pub use surfaces::SURFACE_HISTORY_LIMIT;
pub use types::{
    ApprovalRecord, ApprovalStatus, ChatPatch, ChatRecord, NewChat, PendingApproval, StoredMessage,
    ToolStepStatus,
};

use chrono::{DateTime, SecondsFormat, Utc};
use connections::{Held, Readers, WriteTx, Writer};
use error::DbContext;
use serde::Serialize;
use serde::de::DeserializeOwned;
use sqlx::ConnectOptions;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use std::path::Path;
use std::str::FromStr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// How long a connection waits for another writer's lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Pause between attempts to open a database another process is setting up.
const OPEN_RETRY_DELAY: Duration = Duration::from_millis(50);

/// Reader connections for a file-backed store (there is one writer connection besides).
const MAX_READERS: usize = 4;

/// A handle on the database. Cheap to clone; clones share the connections.
#[derive(Debug, Clone)]
pub struct Store {
    /// Connections for reads (`connections.rs`).
    readers: Readers,
    /// The one connection for writes (`connections.rs`).
    writer: Writer,
    /// Last timestamp handed out, so timestamps from one handle are strictly increasing.
    clock: Arc<Mutex<DateTime<Utc>>>,
}

impl Store {
    /// Opens (creating if needed) the database at `path` and applies pending migrations.
    ///
    /// The parent directory is created. The connection runs in WAL mode with
    /// `synchronous=NORMAL`, `foreign_keys=ON` and a 5 s busy timeout.
    ///
    /// Errors: [`StoreError::Database`] if the directory or file cannot be created or opened,
    /// [`StoreError::Migrate`] if the migrations cannot be applied.
    pub async fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| StoreError::Database {
                context: format!("creating the database directory {}", parent.display()),
                source: sqlx::Error::Io(e),
            })?;
        }
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(BUSY_TIMEOUT);
        // Switching a new file to WAL takes an exclusive lock that SQLite's busy timeout does not
        // wait for, so a second process opening the same new file at that moment gets
        // SQLITE_BUSY: wait and retry for up to the busy timeout.
        let mut waited = Duration::ZERO;
        let writer = loop {
            match options.connect().await {
                Ok(connection) => break Writer::new(connection),
                Err(e) if error::is_busy(&e) && waited < BUSY_TIMEOUT => {
                    tokio::time::sleep(OPEN_RETRY_DELAY).await;
                    waited += OPEN_RETRY_DELAY;
                }
                Err(e) => return Err(e).db(|| format!("opening the database {}", path.display())),
            }
        };
        // Readers connect when first needed: by then the writer has made the file WAL.
        let readers = Readers::new(options, MAX_READERS);
        Store::migrate(readers, writer).await
    }

    /// Opens a private in-memory database (for tests): one connection that is never recycled, so
    /// every call sees the same data. It is gone when the last clone is dropped.
    ///
    /// Errors: [`StoreError::Database`] or [`StoreError::Migrate`] as for [`Store::open`].
    pub async fn open_in_memory() -> Result<Store, StoreError> {
        let options = SqliteConnectOptions::from_str("sqlite::memory:")
            .db(|| "parsing the in-memory database address".to_string())?
            .foreign_keys(true)
            .busy_timeout(BUSY_TIMEOUT);
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .connect_with(options)
            .await
            .db(|| "opening an in-memory database".to_string())?;
        Store::migrate(Readers::Pool(pool.clone()), Writer::Pool(pool)).await
    }

    async fn migrate(readers: Readers, writer: Writer) -> Result<Store, StoreError> {
        let migrator = sqlx::migrate!("./migrations");
        let mut connection = writer
            .acquire()
            .await
            .db(|| "opening the writer connection".to_string())?;
        if let Err(first) = migrator.run(&mut *connection).await {
            // Two processes opening a new file at once may race on the first migration; the
            // loser sees the winner's work on a second pass. A real failure fails again.
            tracing::debug!(error = %first, "migration failed once; retrying");
            tokio::time::sleep(Duration::from_millis(200)).await;
            migrator.run(&mut *connection).await?;
        }
        drop(connection);
        Ok(Store {
            readers,
            writer,
            clock: Arc::new(Mutex::new(DateTime::<Utc>::MIN_UTC)),
        })
    }

    /// Closes every connection of this handle (and its clones'), waiting for running calls to
    /// finish. Later calls on any clone fail with [`StoreError::Database`].
    /// Dropping the handles without calling this is also safe: committed data is durable.
    pub async fn close(&self) {
        self.readers.close().await;
        self.writer.close().await;
    }

    /// The current time, strictly after any time this handle returned before (so ordering by
    /// timestamp follows the order of writes from one process).
    pub(crate) fn now(&self) -> DateTime<Utc> {
        let mut last = self.clock.lock().unwrap_or_else(PoisonError::into_inner);
        let mut now = Utc::now();
        if now <= *last {
            now = *last + chrono::TimeDelta::nanoseconds(1);
        }
        *last = now;
        now
    }

    /// Begins a write transaction on the writer connection that takes the database's write lock
    /// at once, so writers of other processes wait (up to the busy timeout) instead of failing
    /// midway; writers of this process wait for the writer connection.
    pub(crate) async fn begin_write(
        &self,
        context: impl FnOnce() -> String,
    ) -> Result<WriteTx, StoreError> {
        self.writer.begin().await.db(context)
    }

    /// The writer connection for one statement, once the writes queued before it are done.
    pub(crate) async fn write_conn(&self) -> Result<Held, StoreError> {
        self.writer
            .acquire()
            .await
            .db(|| "taking the writer connection".to_string())
    }

    /// A reader connection for one read.
    pub(crate) async fn read_conn(&self) -> Result<Held, StoreError> {
        self.readers
            .acquire()
            .await
            .db(|| "taking a reader connection".to_string())
    }
}

/// Fails with [`StoreError::NotFound`] (`what: "chat"`) unless chat `chat_id` exists, read
/// inside the caller's transaction so the answer holds until it commits.
pub(crate) async fn require_chat(
    tx: &mut sqlx::SqliteConnection,
    chat_id: &str,
    context: impl FnOnce() -> String,
) -> Result<(), StoreError> {
    let exists: Option<i64> = sqlx::query_scalar("SELECT 1 FROM chats WHERE id = ?")
        .bind(chat_id)
        .fetch_optional(&mut *tx)
        .await
        .db(context)?;
    match exists {
        Some(_) => Ok(()),
        None => Err(StoreError::NotFound {
            what: "chat",
            id: chat_id.to_string(),
        }),
    }
}

/// Formats a timestamp for storage: RFC 3339, UTC, nine fractional digits (sorts as text).
pub(crate) fn ts(at: &DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Nanos, true)
}

/// Parses a stored timestamp; `what` names the table, row and column for the error.
pub(crate) fn parse_ts(
    text: &str,
    what: impl FnOnce() -> String,
) -> Result<DateTime<Utc>, StoreError> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| StoreError::Corrupt {
            what: what(),
            message: format!("bad timestamp '{text}': {e}"),
        })
}

/// Decodes a stored JSON column; `what` names the table, row and column for the error.
pub(crate) fn decode_json<T: DeserializeOwned>(
    text: &str,
    what: impl FnOnce() -> String,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt {
        what: what(),
        message: e.to_string(),
    })
}

/// Encodes a value for a JSON column.
pub(crate) fn encode_json<T: Serialize>(
    value: &T,
    what: impl FnOnce() -> String,
) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Corrupt {
        what: what(),
        message: format!("cannot encode as JSON: {e}"),
    })
}

/// Parses a stored enum name with its `FromStr`; `what` names the table, row and column.
pub(crate) fn parse_name<T: FromStr<Err = String>>(
    text: &str,
    what: impl FnOnce() -> String,
) -> Result<T, StoreError> {
    text.parse().map_err(|message| StoreError::Corrupt {
        what: what(),
        message,
    })
}
