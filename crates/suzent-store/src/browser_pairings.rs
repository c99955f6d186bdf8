//! Browser extension pairings (issue 15, migration 0009): the extensions the user approved in the
//! app. A pairing is bound to one extension id; the credential the extension presents is stored
//! only as its SHA-256 (64 hex digits), never in clear. Revoking sets `revoked_at`: the row stays
//! (so status can say when) and its hash never matches again.

use crate::error::{DbContext, is_unique_violation};
use crate::{Store, StoreError, parse_ts, ts};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

/// A pairing to store, after the user approved it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewBrowserPairing {
    /// Unique id (e.g. [`suzent_core::new_id`]).
    pub id: String,
    /// The extension id (32 letters `a`-`p`), from the connection's `Origin`.
    pub extension_id: String,
    /// Browser name as the extension reported it (`Chrome`, `Edge`, `Chromium`).
    pub browser: String,
    /// Browser version as reported.
    pub browser_version: String,
    /// Extension version as reported.
    pub extension_version: String,
    /// SHA-256 of the credential, 64 lower-case hex digits.
    pub credential_hash: String,
}

/// A stored pairing (never carries the credential; not even its hash leaves the store).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BrowserPairing {
    /// Unique id.
    pub id: String,
    /// The extension id it is bound to.
    pub extension_id: String,
    /// Browser name as reported at pairing.
    pub browser: String,
    /// Browser version as last reported.
    pub browser_version: String,
    /// Extension version as last reported.
    pub extension_version: String,
    /// When the user approved it.
    pub created_at: DateTime<Utc>,
    /// When the extension last connected with it.
    pub last_seen_at: Option<DateTime<Utc>>,
    /// When it was revoked (`None`: active).
    pub revoked_at: Option<DateTime<Utc>>,
}

const COLUMNS: &str = "id, extension_id, browser, browser_version, extension_version, created_at, \
                       last_seen_at, revoked_at";

fn decode(row: &SqliteRow) -> Result<BrowserPairing, StoreError> {
    let id: String = row.get("id");
    let at = |column: &str| -> Result<Option<DateTime<Utc>>, StoreError> {
        let text: Option<String> = row.get(column);
        text.map(|t| parse_ts(&t, || format!("browser_pairings row '{id}' ({column})")))
            .transpose()
    };
    let created_at: String = row.get("created_at");
    Ok(BrowserPairing {
        created_at: parse_ts(&created_at, || {
            format!("browser_pairings row '{id}' (created_at)")
        })?,
        last_seen_at: at("last_seen_at")?,
        revoked_at: at("revoked_at")?,
        extension_id: row.get("extension_id"),
        browser: row.get("browser"),
        browser_version: row.get("browser_version"),
        extension_version: row.get("extension_version"),
        id,
    })
}

impl Store {
    /// Stores an approved pairing, revoking in the same transaction every active pairing of the
    /// same extension id in the same browser (one credential per installed extension).
    ///
    /// Errors: [`StoreError::Conflict`] if the id or the credential hash is already stored,
    /// [`StoreError::Database`].
    pub async fn add_browser_pairing(
        &self,
        pairing: &NewBrowserPairing,
    ) -> Result<BrowserPairing, StoreError> {
        let now = self.now();
        let mut tx = self
            .begin_write(|| format!("storing browser pairing '{}'", pairing.id))
            .await?;
        sqlx::query(
            "UPDATE browser_pairings SET revoked_at = ?
             WHERE extension_id = ? AND browser = ? AND revoked_at IS NULL",
        )
        .bind(ts(&now))
        .bind(&pairing.extension_id)
        .bind(&pairing.browser)
        .execute(&mut *tx)
        .await
        .db(|| {
            format!(
                "replacing the pairings of extension '{}'",
                pairing.extension_id
            )
        })?;
        let inserted = sqlx::query(
            "INSERT INTO browser_pairings (id, extension_id, browser, browser_version,
                 extension_version, credential_hash, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&pairing.id)
        .bind(&pairing.extension_id)
        .bind(&pairing.browser)
        .bind(&pairing.browser_version)
        .bind(&pairing.extension_version)
        .bind(&pairing.credential_hash)
        .bind(ts(&now))
        .execute(&mut *tx)
        .await;
        match inserted {
            Err(e) if is_unique_violation(&e) => {
                return Err(StoreError::Conflict {
                    message: format!("browser pairing '{}' or its credential exists", pairing.id),
                });
            }
            other => {
                other.db(|| format!("storing browser pairing '{}'", pairing.id))?;
            }
        }
        tx.commit()
            .await
            .db(|| format!("committing browser pairing '{}'", pairing.id))?;
        Ok(BrowserPairing {
            id: pairing.id.clone(),
            extension_id: pairing.extension_id.clone(),
            browser: pairing.browser.clone(),
            browser_version: pairing.browser_version.clone(),
            extension_version: pairing.extension_version.clone(),
            created_at: now,
            last_seen_at: None,
            revoked_at: None,
        })
    }

    /// The active (not revoked) pairing whose credential hashes to `credential_hash` and which is
    /// bound to `extension_id`; `None` when there is none (unknown, revoked, or another
    /// extension's credential).
    ///
    /// Errors: [`StoreError::Corrupt`], [`StoreError::Database`].
    pub async fn find_browser_pairing(
        &self,
        extension_id: &str,
        credential_hash: &str,
    ) -> Result<Option<BrowserPairing>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM browser_pairings
             WHERE credential_hash = ? AND extension_id = ? AND revoked_at IS NULL"
        ))
        .bind(credential_hash)
        .bind(extension_id)
        .fetch_optional(&mut *self.read_conn().await?)
        .await
        .db(|| format!("looking up a pairing of extension '{extension_id}'"))?;
        row.as_ref().map(decode).transpose()
    }

    /// Pairing `id`, active or revoked.
    ///
    /// Errors: [`StoreError::NotFound`], [`StoreError::Corrupt`], [`StoreError::Database`].
    pub async fn browser_pairing(&self, id: &str) -> Result<BrowserPairing, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM browser_pairings WHERE id = ?"
        ))
        .bind(id)
        .fetch_optional(&mut *self.read_conn().await?)
        .await
        .db(|| format!("reading browser pairing '{id}'"))?;
        match row {
            Some(row) => decode(&row),
            None => Err(StoreError::NotFound {
                what: "browser pairing",
                id: id.to_string(),
            }),
        }
    }

    /// Every pairing, newest first; revoked ones too when `include_revoked`.
    ///
    /// Errors: [`StoreError::Corrupt`], [`StoreError::Database`].
    pub async fn list_browser_pairings(
        &self,
        include_revoked: bool,
    ) -> Result<Vec<BrowserPairing>, StoreError> {
        let filter = if include_revoked {
            ""
        } else {
            "WHERE revoked_at IS NULL"
        };
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM browser_pairings {filter} ORDER BY created_at DESC, id"
        ))
        .fetch_all(&mut *self.read_conn().await?)
        .await
        .db(|| "listing browser pairings".to_string())?;
        rows.iter().map(decode).collect()
    }

    /// Records that the extension connected with pairing `id` now, reporting these versions.
    ///
    /// Errors: [`StoreError::NotFound`] if no active pairing has that id, [`StoreError::Database`].
    pub async fn touch_browser_pairing(
        &self,
        id: &str,
        browser_version: &str,
        extension_version: &str,
    ) -> Result<(), StoreError> {
        let now = self.now();
        let done = sqlx::query(
            "UPDATE browser_pairings SET last_seen_at = ?, browser_version = ?,
                 extension_version = ?
             WHERE id = ? AND revoked_at IS NULL",
        )
        .bind(ts(&now))
        .bind(browser_version)
        .bind(extension_version)
        .bind(id)
        .execute(&mut *self.write_conn().await?)
        .await
        .db(|| format!("recording a connection of browser pairing '{id}'"))?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound {
                what: "browser pairing",
                id: id.to_string(),
            });
        }
        Ok(())
    }

    /// Revokes pairing `id`; returns `false` when it was already revoked.
    ///
    /// Errors: [`StoreError::NotFound`] if there is no pairing `id`, [`StoreError::Database`].
    pub async fn revoke_browser_pairing(&self, id: &str) -> Result<bool, StoreError> {
        let now = self.now();
        let done = sqlx::query(
            "UPDATE browser_pairings SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
        )
        .bind(ts(&now))
        .bind(id)
        .execute(&mut *self.write_conn().await?)
        .await
        .db(|| format!("revoking browser pairing '{id}'"))?;
        if done.rows_affected() == 1 {
            return Ok(true);
        }
        self.browser_pairing(id).await.map(|_| false)
    }

    /// The ids of the active (not revoked) pairings; a running bridge polls them to close the
    /// connections of pairings another process (the CLI) revoked.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn active_browser_pairing_ids(&self) -> Result<Vec<String>, StoreError> {
        sqlx::query_scalar("SELECT id FROM browser_pairings WHERE revoked_at IS NULL ORDER BY id")
            .fetch_all(&mut *self.read_conn().await?)
            .await
            .db(|| "listing active browser pairings".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn pairing(id: &str, ext: &str, hash_digit: char) -> NewBrowserPairing {
        NewBrowserPairing {
            id: id.into(),
            extension_id: ext.into(),
            browser: "Chromium".into(),
            browser_version: "156".into(),
            extension_version: "0.1.0".into(),
            credential_hash: std::iter::repeat_n(hash_digit, 64).collect(),
        }
    }

    const EXT_A: &str = "abcdefghijklmnopabcdefghijklmnop";
    const EXT_B: &str = "ponmlkjihgfedcbaponmlkjihgfedcba";

    #[tokio::test]
    async fn a_credential_matches_only_its_own_extension() -> anyhow::Result<()> {
        let store = Store::open_in_memory().await?;
        store
            .add_browser_pairing(&pairing("p1", EXT_A, 'a'))
            .await?;
        let hash: String = std::iter::repeat_n('a', 64).collect();
        let found = store
            .find_browser_pairing(EXT_A, &hash)
            .await?
            .map(|p| p.id);
        assert_eq!(found, Some("p1".to_string()));
        assert_eq!(store.find_browser_pairing(EXT_B, &hash).await?, None);
        Ok(())
    }

    #[tokio::test]
    async fn a_revoked_credential_never_matches_again() -> anyhow::Result<()> {
        let store = Store::open_in_memory().await?;
        store
            .add_browser_pairing(&pairing("p1", EXT_A, 'a'))
            .await?;
        assert!(store.revoke_browser_pairing("p1").await?);
        assert!(!store.revoke_browser_pairing("p1").await?);
        let hash: String = std::iter::repeat_n('a', 64).collect();
        assert_eq!(store.find_browser_pairing(EXT_A, &hash).await?, None);
        assert_eq!(
            store.active_browser_pairing_ids().await?,
            Vec::<String>::new()
        );
        assert!(store.browser_pairing("p1").await?.revoked_at.is_some());
        Ok(())
    }

    #[tokio::test]
    async fn pairing_the_same_extension_again_revokes_the_old_credential() -> anyhow::Result<()> {
        let store = Store::open_in_memory().await?;
        store
            .add_browser_pairing(&pairing("p1", EXT_A, 'a'))
            .await?;
        store
            .add_browser_pairing(&pairing("p2", EXT_A, 'b'))
            .await?;
        store
            .add_browser_pairing(&pairing("p3", EXT_B, 'c'))
            .await?;
        let mut active = store.active_browser_pairing_ids().await?;
        active.sort();
        assert_eq!(active, vec!["p2".to_string(), "p3".to_string()]);
        Ok(())
    }

    #[tokio::test]
    async fn revoking_an_unknown_pairing_names_it() -> anyhow::Result<()> {
        let store = Store::open_in_memory().await?;
        let err = store
            .revoke_browser_pairing("nope")
            .await
            .err()
            .map(|e| e.to_string());
        assert_eq!(err, Some("browser pairing 'nope' not found".to_string()));
        Ok(())
    }
}
