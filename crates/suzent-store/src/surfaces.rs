//! Canvas surfaces (issue 8): the live surfaces of each chat, stored as the JSON of
//! [`suzent_core::Surface`], and `surface_history`, one row per change, kept after a surface is
//! deleted. Writes are versioned: a surface is only replaced by its next version.

use crate::error::{DbContext, is_foreign_key_violation, is_unique_violation};
use crate::{Store, StoreError, decode_json, encode_json, parse_ts, ts};
use sqlx::Row;
use suzent_core::{Surface, SurfaceChange, SurfaceChangeKind, SurfaceHistoryEntry};

impl Store {
    /// The chat's live surface `surface_id`, if any.
    ///
    /// Errors: [`StoreError::Corrupt`] if the stored body does not decode,
    /// [`StoreError::Database`].
    pub async fn get_surface(
        &self,
        chat_id: &str,
        surface_id: &str,
    ) -> Result<Option<Surface>, StoreError> {
        let body: Option<String> =
            sqlx::query_scalar("SELECT body FROM surfaces WHERE chat_id = ? AND surface_id = ?")
                .bind(chat_id)
                .bind(surface_id)
                .fetch_optional(&mut *self.read_conn().await?)
                .await
                .db(|| format!("reading surface '{surface_id}' of chat '{chat_id}'"))?;
        body.as_deref()
            .map(|b| {
                decode_json(b, || {
                    format!("surfaces row '{chat_id}/{surface_id}' (body)")
                })
            })
            .transpose()
    }

    /// The chat's live surfaces, oldest first (by creation time, then id).
    ///
    /// Errors: [`StoreError::Corrupt`] if a stored body does not decode,
    /// [`StoreError::Database`].
    pub async fn list_surfaces(&self, chat_id: &str) -> Result<Vec<Surface>, StoreError> {
        let rows = sqlx::query(
            "SELECT surface_id, body FROM surfaces WHERE chat_id = ?
             ORDER BY created_at, surface_id",
        )
        .bind(chat_id)
        .fetch_all(&mut *self.read_conn().await?)
        .await
        .db(|| format!("listing the surfaces of chat '{chat_id}'"))?;
        rows.iter()
            .map(|row| {
                let id: String = row.get("surface_id");
                let body: String = row.get("body");
                decode_json(&body, || format!("surfaces row '{chat_id}/{id}' (body)"))
            })
            .collect()
    }

    /// Stores `surface` and records `change` in its history, in one transaction. Version 1
    /// creates the surface; a later version replaces version - 1 only.
    ///
    /// Errors: [`StoreError::NotFound`] if the chat does not exist; [`StoreError::Conflict`]
    /// if version 1 already exists or the stored version is not `version - 1` (another change
    /// came in between: reload and retry); [`StoreError::Database`].
    pub async fn save_surface(
        &self,
        surface: &Surface,
        change: &SurfaceChange,
    ) -> Result<(), StoreError> {
        let (chat_id, surface_id) = (&surface.chat_id, &surface.surface_id);
        let context = || format!("storing surface '{surface_id}' of chat '{chat_id}'");
        let body = encode_json(surface, || format!("surface '{surface_id}'"))?;
        let payload = encode_json(&change.payload, || {
            format!("a change of surface '{surface_id}'")
        })?;
        let mut tx = self.begin_write(context).await?;
        let written = if surface.version <= 1 {
            sqlx::query(
                "INSERT INTO surfaces (chat_id, surface_id, version, body, created_at, updated_at)
                 VALUES (?, ?, 1, ?, ?, ?)",
            )
            .bind(chat_id)
            .bind(surface_id)
            .bind(&body)
            .bind(ts(&surface.created_at))
            .bind(ts(&surface.updated_at))
            .execute(&mut *tx)
            .await
        } else {
            sqlx::query(
                "UPDATE surfaces SET version = ?, body = ?, updated_at = ?
                 WHERE chat_id = ? AND surface_id = ? AND version = ?",
            )
            .bind(i64::from(surface.version))
            .bind(&body)
            .bind(ts(&surface.updated_at))
            .bind(chat_id)
            .bind(surface_id)
            .bind(i64::from(surface.version - 1))
            .execute(&mut *tx)
            .await
        };
        let conflict = || StoreError::Conflict {
            message: format!(
                "surface '{surface_id}' of chat '{chat_id}' changed meanwhile (version {} was not the next one); reload it and try again",
                surface.version
            ),
        };
        match written {
            Ok(r) if r.rows_affected() == 1 => {}
            Ok(_) => return Err(conflict()),
            Err(e) if is_unique_violation(&e) => return Err(conflict()),
            Err(e) if is_foreign_key_violation(&e) => {
                return Err(StoreError::NotFound {
                    what: "chat",
                    id: chat_id.clone(),
                });
            }
            Err(e) => return Err(e).db(context),
        }
        insert_history(
            &mut tx,
            chat_id,
            surface_id,
            surface.version,
            change,
            &payload,
            &self.now(),
        )
        .await
        .db(context)?;
        tx.commit().await.db(context)
    }

    /// Deletes the live surface and records `change` (kind `delete`) with its last version.
    /// Returns that version, or `None` when there was no such surface (nothing recorded).
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn delete_surface(
        &self,
        chat_id: &str,
        surface_id: &str,
        change: &SurfaceChange,
    ) -> Result<Option<u32>, StoreError> {
        let context = || format!("deleting surface '{surface_id}' of chat '{chat_id}'");
        let payload = encode_json(&change.payload, || {
            format!("a change of surface '{surface_id}'")
        })?;
        let mut tx = self.begin_write(context).await?;
        let version: Option<i64> = sqlx::query_scalar(
            "DELETE FROM surfaces WHERE chat_id = ? AND surface_id = ? RETURNING version",
        )
        .bind(chat_id)
        .bind(surface_id)
        .fetch_optional(&mut *tx)
        .await
        .db(context)?;
        let Some(version) = version else {
            tx.commit().await.db(context)?;
            return Ok(None);
        };
        let version = u32::try_from(version).unwrap_or(u32::MAX);
        insert_history(
            &mut tx,
            chat_id,
            surface_id,
            version,
            change,
            &payload,
            &self.now(),
        )
        .await
        .db(context)?;
        tx.commit().await.db(context)?;
        Ok(Some(version))
    }

    /// Every recorded change of the surface `surface_id` of the chat, oldest first, including
    /// changes made before it was deleted (and before it was created again).
    ///
    /// Errors: [`StoreError::Corrupt`] if a stored row does not decode,
    /// [`StoreError::Database`].
    pub async fn surface_history(
        &self,
        chat_id: &str,
        surface_id: &str,
    ) -> Result<Vec<SurfaceHistoryEntry>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, version, kind, tool_call_id, payload, created_at FROM surface_history
             WHERE chat_id = ? AND surface_id = ? ORDER BY id",
        )
        .bind(chat_id)
        .bind(surface_id)
        .fetch_all(&mut *self.read_conn().await?)
        .await
        .db(|| format!("reading the history of surface '{surface_id}' of chat '{chat_id}'"))?;
        rows.iter()
            .map(|row| {
                let id: i64 = row.get("id");
                let what = |col: &str| format!("surface_history row {id} ({col})");
                let kind: String = row.get("kind");
                let version: i64 = row.get("version");
                Ok(SurfaceHistoryEntry {
                    id,
                    chat_id: chat_id.to_string(),
                    surface_id: surface_id.to_string(),
                    version: u32::try_from(version).map_err(|_| StoreError::Corrupt {
                        what: what("version"),
                        message: format!("{version} is not a version"),
                    })?,
                    kind: SurfaceChangeKind::parse(&kind).ok_or_else(|| StoreError::Corrupt {
                        what: what("kind"),
                        message: format!("unknown change kind '{kind}'"),
                    })?,
                    tool_call_id: row.get("tool_call_id"),
                    payload: decode_json(&row.get::<String, _>("payload"), || what("payload"))?,
                    created_at: parse_ts(&row.get::<String, _>("created_at"), || {
                        what("created_at")
                    })?,
                })
            })
            .collect()
    }
}

/// Changes kept per surface: the newest ones; older rows are dropped as new ones come in, so an
/// agent updating a progress bar in a loop cannot grow the database without bound.
pub const SURFACE_HISTORY_LIMIT: i64 = 200;

/// Records `change` and drops the surface's history rows beyond [`SURFACE_HISTORY_LIMIT`].
async fn insert_history(
    tx: &mut crate::connections::WriteTx,
    chat_id: &str,
    surface_id: &str,
    version: u32,
    change: &SurfaceChange,
    payload: &str,
    now: &chrono::DateTime<chrono::Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO surface_history (chat_id, surface_id, version, kind, tool_call_id, payload, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(chat_id)
    .bind(surface_id)
    .bind(i64::from(version))
    .bind(change.kind.as_str())
    .bind(change.tool_call_id.as_deref())
    .bind(payload)
    .bind(ts(now))
    .execute(&mut **tx)
    .await?;
    sqlx::query(
        "DELETE FROM surface_history WHERE chat_id = ? AND surface_id = ? AND id <= (
             SELECT id FROM surface_history WHERE chat_id = ? AND surface_id = ?
             ORDER BY id DESC LIMIT 1 OFFSET ?)",
    )
    .bind(chat_id)
    .bind(surface_id)
    .bind(chat_id)
    .bind(surface_id)
    .bind(SURFACE_HISTORY_LIMIT)
    .execute(&mut **tx)
    .await
    .map(|_| ())
}
