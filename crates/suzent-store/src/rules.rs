//! Permission rules.

use crate::error::{DbContext, is_foreign_key_violation, is_unique_violation};
use crate::{Store, StoreError, decode_json, encode_json, parse_name, parse_ts, ts};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;
use suzent_core::{Rule, RuleDestination};

const RULE_COLUMNS: &str =
    "id, chat_id, destination, tool, behavior, matcher, description, created_at";

impl Store {
    /// Stores a rule. A session rule must name its chat (`chat_id: Some`) and a global rule must
    /// not (`chat_id: None`); session rules are deleted with their chat.
    ///
    /// Errors: [`StoreError::Conflict`] if a rule with this id exists or the destination and
    /// `chat_id` disagree, [`StoreError::NotFound`] (`what: "chat"`) if the session rule's chat
    /// does not exist, [`StoreError::Database`].
    pub async fn add_rule(&self, rule: &Rule) -> Result<(), StoreError> {
        let id = &rule.id;
        match (rule.destination, &rule.chat_id) {
            (RuleDestination::Session, None) => {
                return Err(StoreError::Conflict {
                    message: format!("session rule '{id}' has no chat id"),
                });
            }
            (RuleDestination::Global, Some(chat)) => {
                return Err(StoreError::Conflict {
                    message: format!(
                        "global rule '{id}' must not belong to a chat (got chat '{chat}')"
                    ),
                });
            }
            _ => {}
        }
        let matcher = encode_json(&rule.matcher, || format!("matcher of rule '{id}'"))?;
        let result = sqlx::query(
            "INSERT INTO rules (id, chat_id, destination, tool, behavior, matcher, description, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(id)
        .bind(&rule.chat_id)
        .bind(rule.destination.as_str())
        .bind(&rule.tool)
        .bind(rule.behavior.as_str())
        .bind(matcher)
        .bind(&rule.description)
        .bind(ts(&rule.created_at))
        .execute(&mut *self.write_conn().await?)
        .await;
        match result {
            Ok(_) => Ok(()),
            Err(e) if is_unique_violation(&e) => Err(StoreError::Conflict {
                message: format!("a rule with id '{id}' already exists"),
            }),
            Err(e) if is_foreign_key_violation(&e) => Err(StoreError::NotFound {
                what: "chat",
                id: rule.chat_id.clone().unwrap_or_default(),
            }),
            Err(e) => Err(e).db(|| format!("storing rule '{id}'")),
        }
    }

    /// Rules, oldest first. `Some(chat)`: every global rule plus that chat's session rules;
    /// `None`: every rule (global and every chat's session rules).
    ///
    /// Errors: [`StoreError::Corrupt`] naming the rule if a column cannot be decoded,
    /// [`StoreError::Database`].
    pub async fn list_rules(&self, chat_id: Option<&str>) -> Result<Vec<Rule>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {RULE_COLUMNS} FROM rules
             WHERE ? IS NULL OR destination = 'global' OR chat_id = ?
             ORDER BY created_at, rowid"
        ))
        .bind(chat_id)
        .bind(chat_id)
        .fetch_all(&mut *self.read_conn().await?)
        .await
        .db(|| "listing rules".to_string())?;
        rows.iter().map(rule_from_row).collect()
    }

    /// Deletes a rule. Returns `false` if there was no rule with this id.
    ///
    /// Errors: [`StoreError::Database`].
    pub async fn delete_rule(&self, id: &str) -> Result<bool, StoreError> {
        let done = sqlx::query("DELETE FROM rules WHERE id = ?")
            .bind(id)
            .execute(&mut *self.write_conn().await?)
            .await
            .db(|| format!("deleting rule '{id}'"))?;
        Ok(done.rows_affected() == 1)
    }
}

fn rule_from_row(row: &SqliteRow) -> Result<Rule, StoreError> {
    let id: String = row.try_get("id").db(|| "reading a rules row".to_string())?;
    let read = |col: &str| format!("reading column {col} of rule '{id}'");
    let what = |col: &str| format!("rules row '{id}' ({col})");
    let destination: String = row.try_get("destination").db(|| read("destination"))?;
    let behavior: String = row.try_get("behavior").db(|| read("behavior"))?;
    let matcher: String = row.try_get("matcher").db(|| read("matcher"))?;
    let created_at: String = row.try_get("created_at").db(|| read("created_at"))?;
    Ok(Rule {
        tool: row.try_get("tool").db(|| read("tool"))?,
        behavior: parse_name(&behavior, || what("behavior"))?,
        matcher: decode_json(&matcher, || what("matcher"))?,
        destination: parse_name(&destination, || what("destination"))?,
        chat_id: row.try_get("chat_id").db(|| read("chat_id"))?,
        created_at: parse_ts(&created_at, || what("created_at"))?,
        description: row.try_get("description").db(|| read("description"))?,
        id,
    })
}
