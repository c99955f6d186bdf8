//! The store's error type.

/// An error of a [`crate::Store`] call.
///
/// Every variant says what was attempted or which row is at fault; no call panics on bad data.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite failed (I/O, locking past the busy timeout, a constraint not mapped to another
    /// variant...). `context` says what was being attempted, e.g. `appending a message to chat 'c1'`.
    #[error("database error while {context}: {source}")]
    Database {
        /// What the store was doing.
        context: String,
        /// The driver's error.
        #[source]
        source: sqlx::Error,
    },
    /// The embedded migrations could not be applied (e.g. the file was written by a newer Suzent).
    #[error("database migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// The row the call needs does not exist.
    #[error("{what} '{id}' not found")]
    NotFound {
        /// The kind of row: `chat`, `approval`...
        what: &'static str,
        /// Its id.
        id: String,
    },
    /// A stored value cannot be decoded (bad JSON, unknown enum name, bad timestamp).
    #[error("corrupt data in {what}: {message}")]
    Corrupt {
        /// The table, row and column, e.g. `messages row seq 3 of chat 'c1' (body)`.
        what: String,
        /// The decoder's message.
        message: String,
    },
    /// The write contradicts what is stored (a duplicate tool result, an id reused with other
    /// content) or is inconsistent in itself (a session rule without a chat).
    #[error("conflict: {message}")]
    Conflict {
        /// What conflicts.
        message: String,
    },
}

/// Attaches "what was attempted" to driver errors.
pub(crate) trait DbContext<T> {
    /// Maps a driver error to [`StoreError::Database`] with the context built by `context`.
    fn db(self, context: impl FnOnce() -> String) -> Result<T, StoreError>;
}

impl<T> DbContext<T> for Result<T, sqlx::Error> {
    fn db(self, context: impl FnOnce() -> String) -> Result<T, StoreError> {
        self.map_err(|source| StoreError::Database {
            context: context(),
            source,
        })
    }
}

/// [`DbContext::db`] for a statement on rows that belong to a chat: a FOREIGN KEY violation
/// means the chat does not exist ([`StoreError::NotFound`], `what: "chat"`).
pub(crate) trait ChatDbContext<T> {
    /// Maps a driver error like [`DbContext::db`], a missing `chat_id` to `NotFound`.
    fn chat_db(self, chat_id: &str, context: impl FnOnce() -> String) -> Result<T, StoreError>;
}

impl<T> ChatDbContext<T> for Result<T, sqlx::Error> {
    fn chat_db(self, chat_id: &str, context: impl FnOnce() -> String) -> Result<T, StoreError> {
        match self {
            Err(e) if is_foreign_key_violation(&e) => Err(StoreError::NotFound {
                what: "chat",
                id: chat_id.to_string(),
            }),
            other => other.db(context),
        }
    }
}

/// Whether a driver error is a UNIQUE / PRIMARY KEY violation.
pub(crate) fn is_unique_violation(err: &sqlx::Error) -> bool {
    matches!(err, sqlx::Error::Database(db) if db.is_unique_violation())
}

/// Whether a driver error is a FOREIGN KEY violation.
pub(crate) fn is_foreign_key_violation(err: &sqlx::Error) -> bool {
    matches!(err, sqlx::Error::Database(db) if db.is_foreign_key_violation())
}

/// Whether a driver error is SQLITE_BUSY (any extended code: the primary code is the low byte).
pub(crate) fn is_busy(err: &sqlx::Error) -> bool {
    const SQLITE_BUSY: i64 = 5;
    matches!(err, sqlx::Error::Database(db)
        if db.code().and_then(|c| c.parse::<i64>().ok()).is_some_and(|c| c & 0xff == SQLITE_BUSY))
}
