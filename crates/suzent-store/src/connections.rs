//! The connections a process reads and writes through.
//!
//! SQLite lets one writer at a time hold the database's write lock. Two connections of one
//! process writing at once meet in that lock, and the one that waits sleeps in SQLite's busy
//! handler (1, 2, 5, 10… ms between tries) however soon the lock is free. Writers of this
//! process instead queue on [`Writer`]'s async mutex and start the moment the last one is done;
//! only writers of other processes (the CLI beside the app) meet in SQLite's lock.
//!
//! Readers are a few connections opened when first needed; a read takes the first one free,
//! so one connection (and its worker thread) serves the reads of a quiet process.
//!
//! Connections are held directly, not through sqlx's pool: a pooled connection is pinged on its
//! worker thread when given back (and when taken), round trips between threads that cost more
//! than most of the statements this store runs.

use sqlx::pool::PoolConnection;
use sqlx::sqlite::{
    Sqlite, SqliteConnectOptions, SqliteConnection, SqlitePool, SqliteTransactionManager,
};
use sqlx::{ConnectOptions, Connection, TransactionManager};
use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use tokio::sync::{Mutex, OwnedMappedMutexGuard, OwnedMutexGuard};

/// Where this process's writes go. Cheap to clone; clones share the connection.
#[derive(Debug, Clone)]
pub(crate) enum Writer {
    /// A file-backed store's writer connection; `None` once the store is closed.
    Connection(Arc<Mutex<Option<SqliteConnection>>>),
    /// An in-memory store writes through its one pooled connection (a second connection would
    /// open a second, empty database).
    Pool(SqlitePool),
}

impl Writer {
    /// A writer over `connection`.
    pub(crate) fn new(connection: SqliteConnection) -> Writer {
        Writer::Connection(Arc::new(Mutex::new(Some(connection))))
    }

    /// The writer connection, once the writes queued before this one are done.
    ///
    /// Errors: [`sqlx::Error::PoolClosed`] after [`Writer::close`]; the pool's errors.
    pub(crate) async fn acquire(&self) -> Result<Held, sqlx::Error> {
        match self {
            Writer::Connection(slot) => {
                let guard = Arc::clone(slot).lock_owned().await;
                OwnedMutexGuard::try_map(guard, Option::as_mut)
                    .map(Held::Owned)
                    .map_err(|_| sqlx::Error::PoolClosed)
            }
            Writer::Pool(pool) => pool.acquire().await.map(Held::Pooled),
        }
    }

    /// Begins a transaction with `BEGIN IMMEDIATE` (the database's write lock taken at once)
    /// on the writer connection. Dropped without [`WriteTx::commit`], it rolls back.
    ///
    /// Errors: as for [`Writer::acquire`]; SQLite's when the lock cannot be taken within the
    /// busy timeout.
    pub(crate) async fn begin(&self) -> Result<WriteTx, sqlx::Error> {
        // Open before BEGIN is sent: a caller that stops waiting mid-BEGIN drops a transaction
        // that rolls back (a no-op when BEGIN never ran), so no writer inherits it.
        let mut tx = WriteTx {
            connection: self.acquire().await?,
            open: true,
        };
        SqliteTransactionManager::begin(&mut tx.connection, Some("BEGIN IMMEDIATE".into())).await?;
        Ok(tx)
    }

    /// Closes the writer connection after the writes queued before; later writes fail.
    pub(crate) async fn close(&self) {
        match self {
            Writer::Connection(slot) => {
                let taken = slot.lock().await.take();
                if let Some(connection) = taken
                    && let Err(e) = connection.close().await
                {
                    tracing::debug!(error = %e, "closing the writer connection");
                }
            }
            Writer::Pool(pool) => pool.close().await,
        }
    }
}

/// Connections for reads. Cheap to clone; clones share the connections.
#[derive(Debug, Clone)]
pub(crate) enum Readers {
    /// A file-backed store's reader connections, each opened when first needed.
    Connections {
        slots: Arc<[Arc<Mutex<Option<SqliteConnection>>>]>,
        options: SqliteConnectOptions,
        /// Where a read waits when every connection is busy (round robin).
        next: Arc<AtomicUsize>,
        closed: Arc<AtomicBool>,
    },
    /// An in-memory store reads through its one pooled connection.
    Pool(SqlitePool),
}

impl Readers {
    /// Up to `count` (at least one) reader connections opened with `options`.
    pub(crate) fn new(options: SqliteConnectOptions, count: usize) -> Readers {
        Readers::Connections {
            slots: (0..count.max(1))
                .map(|_| Arc::new(Mutex::new(None)))
                .collect(),
            options,
            next: Arc::new(AtomicUsize::new(0)),
            closed: Arc::new(AtomicBool::new(false)),
        }
    }

    /// A reader connection: the first one free, else the next one in turn once it is free.
    ///
    /// Errors: [`sqlx::Error::PoolClosed`] after [`Readers::close`]; SQLite's when a connection
    /// cannot be opened.
    pub(crate) async fn acquire(&self) -> Result<Held, sqlx::Error> {
        let (slots, options, next, closed) = match self {
            Readers::Connections {
                slots,
                options,
                next,
                closed,
            } => (slots, options, next, closed),
            Readers::Pool(pool) => return pool.acquire().await.map(Held::Pooled),
        };
        let free = slots
            .iter()
            .find_map(|slot| Arc::clone(slot).try_lock_owned().ok());
        let mut guard = match free {
            Some(guard) => guard,
            None => {
                let i = next.fetch_add(1, Ordering::Relaxed) % slots.len();
                Arc::clone(&slots[i]).lock_owned().await
            }
        };
        if closed.load(Ordering::Acquire) {
            return Err(sqlx::Error::PoolClosed);
        }
        if guard.is_none() {
            *guard = Some(options.connect().await?);
        }
        OwnedMutexGuard::try_map(guard, Option::as_mut)
            .map(Held::Owned)
            .map_err(|_| sqlx::Error::PoolClosed)
    }

    /// Closes the reader connections after the reads under way; later reads fail.
    pub(crate) async fn close(&self) {
        match self {
            Readers::Connections { slots, closed, .. } => {
                closed.store(true, Ordering::Release);
                for slot in slots.iter() {
                    let taken = slot.lock().await.take();
                    if let Some(connection) = taken
                        && let Err(e) = connection.close().await
                    {
                        tracing::debug!(error = %e, "closing a reader connection");
                    }
                }
            }
            Readers::Pool(pool) => pool.close().await,
        }
    }
}

/// A connection held until dropped: the writer, or a reader.
pub(crate) enum Held {
    Owned(OwnedMappedMutexGuard<Option<SqliteConnection>, SqliteConnection>),
    Pooled(PoolConnection<Sqlite>),
}

impl Deref for Held {
    type Target = SqliteConnection;

    fn deref(&self) -> &SqliteConnection {
        match self {
            Held::Owned(c) => c,
            Held::Pooled(c) => c,
        }
    }
}

impl DerefMut for Held {
    fn deref_mut(&mut self) -> &mut SqliteConnection {
        match self {
            Held::Owned(c) => c,
            Held::Pooled(c) => c,
        }
    }
}

/// A write transaction on the writer connection (see [`Writer::begin`]). Statements run on
/// `&mut *tx`.
pub(crate) struct WriteTx {
    connection: Held,
    /// Begun and neither committed nor rolled back.
    open: bool,
}

impl WriteTx {
    /// Commits the transaction.
    ///
    /// Errors: SQLite's (the transaction is then rolled back when this is dropped).
    pub(crate) async fn commit(mut self) -> Result<(), sqlx::Error> {
        SqliteTransactionManager::commit(&mut self.connection).await?;
        self.open = false;
        Ok(())
    }
}

impl Drop for WriteTx {
    fn drop(&mut self) {
        if self.open {
            // Queued on the connection's worker before the connection is given to the next
            // writer, so the next writer finds no transaction open.
            SqliteTransactionManager::start_rollback(&mut self.connection);
        }
    }
}

impl Deref for WriteTx {
    type Target = SqliteConnection;

    fn deref(&self) -> &SqliteConnection {
        &self.connection
    }
}

impl DerefMut for WriteTx {
    fn deref_mut(&mut self) -> &mut SqliteConnection {
        &mut self.connection
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use crate::{NewChat, Store};
    use serde_json::json;
    use suzent_core::{ChatMessage, PermissionMode};

    async fn file_store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("suzent.db")).await.unwrap();
        (dir, store)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn writers_of_one_process_queue_for_the_writer_instead_of_meeting_in_sqlite_s_lock() {
        let (_dir, store) = file_store().await;
        store
            .create_chat(&NewChat {
                id: "c".into(),
                title: "t".into(),
                workspace: "/w".into(),
                model: None,
                mode: PermissionMode::Default,
                tools: None,
            })
            .await
            .unwrap();
        // SQLite's lock may not be waited for at all: two connections of this process writing
        // at once would fail with SQLITE_BUSY.
        sqlx::query("PRAGMA busy_timeout = 0")
            .execute(&mut *store.write_conn().await.unwrap())
            .await
            .unwrap();
        let tasks: Vec<_> = (0..32)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move {
                    store
                        .append_message("c", None, &ChatMessage::user(format!("m{i}")))
                        .await?;
                    store.set_setting(&format!("k{i}"), &json!(i)).await
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap().unwrap();
        }
        let seqs: Vec<i64> = store
            .messages("c")
            .await
            .unwrap()
            .iter()
            .map(|m| m.seq)
            .collect();
        assert_eq!(seqs, (1..=32).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn a_transaction_dropped_unfinished_or_mid_begin_leaves_none_open_for_the_next_writer() {
        let (_dir, store) = file_store().await;
        // Dropped after a statement, before commit: rolled back.
        let mut tx = store.begin_write(String::new).await.unwrap();
        sqlx::query("INSERT INTO settings (key, value, updated_at) VALUES ('lost', '1', 'x')")
            .execute(&mut *tx)
            .await
            .unwrap();
        drop(tx);
        // Dropped while BEGIN is in flight: polled once, then given up.
        let answered = tokio::select! {
            biased;
            _ = store.begin_write(String::new) => true,
            () = std::future::ready(()) => false,
        };
        assert!(!answered, "BEGIN answered within its first poll");
        // The next write commits on its own, seen by another connection.
        store.set_setting("kept", &json!(2)).await.unwrap();
        assert_eq!(store.get_setting("kept").await.unwrap(), Some(json!(2)));
        assert_eq!(store.get_setting("lost").await.unwrap(), None);
        // And a closed store refuses writes with an error rather than hanging.
        store.close().await;
        assert!(store.set_setting("after", &json!(3)).await.is_err());
    }
}
