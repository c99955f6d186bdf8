//! Settings: a key -> JSON value map.

use crate::error::DbContext;
use crate::{Store, StoreError, decode_json, encode_json, ts};

impl Store {
    /// The value stored under `key`, or `None`.
    ///
    /// Errors: [`StoreError::Corrupt`] naming the key if the value is not valid JSON,
    /// [`StoreError::Database`].
    pub async fn get_setting(&self, key: &str) -> Result<Option<serde_json::Value>, StoreError> {
        let value: Option<String> = sqlx::query_scalar("SELECT value FROM settings WHERE key = ?")
            .bind(key)
            .fetch_optional(&mut *self.read_conn().await?)
            .await
            .db(|| format!("reading setting '{key}'"))?;
        value
            .as_deref()
            .map(|v| decode_json(v, || format!("settings row '{key}' (value)")))
            .transpose()
    }

    /// Stores `value` under `key`, replacing any previous value.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn set_setting(
        &self,
        key: &str,
        value: &serde_json::Value,
    ) -> Result<(), StoreError> {
        let text = encode_json(value, || format!("setting '{key}'"))?;
        sqlx::query(
            "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        )
        .bind(key)
        .bind(text)
        .bind(ts(&self.now()))
        .execute(&mut *self.write_conn().await?)
        .await
        .db(|| format!("storing setting '{key}'"))?;
        Ok(())
    }
}
