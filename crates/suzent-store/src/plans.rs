//! Plans: one per chat, stored as the JSON of [`suzent_core::Plan`].

use crate::error::DbContext;
use crate::{Store, StoreError, decode_json, encode_json, ts};
use suzent_core::Plan;

impl Store {
    /// The chat's plan, or `None` when it has none.
    ///
    /// Errors: [`StoreError::Corrupt`] if the stored plan does not decode, [`StoreError::Database`].
    pub async fn get_plan(&self, chat_id: &str) -> Result<Option<Plan>, StoreError> {
        let body: Option<String> = sqlx::query_scalar("SELECT body FROM plans WHERE chat_id = ?")
            .bind(chat_id)
            .fetch_optional(&mut *self.read_conn().await?)
            .await
            .db(|| format!("reading the plan of chat '{chat_id}'"))?;
        body.as_deref()
            .map(|b| decode_json(b, || format!("plans row '{chat_id}' (body)")))
            .transpose()
    }

    /// Stores the chat's plan, replacing any previous one.
    ///
    /// Errors: [`StoreError::NotFound`] if the chat does not exist, [`StoreError::Database`].
    pub async fn save_plan(&self, chat_id: &str, plan: &Plan) -> Result<(), StoreError> {
        let body = encode_json(plan, || format!("the plan of chat '{chat_id}'"))?;
        let result = sqlx::query(
            "INSERT INTO plans (chat_id, body, updated_at) VALUES (?, ?, ?)
             ON CONFLICT (chat_id) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at",
        )
        .bind(chat_id)
        .bind(body)
        .bind(ts(&self.now()))
        .execute(&mut *self.write_conn().await?)
        .await;
        match result {
            Ok(_) => Ok(()),
            Err(sqlx::Error::Database(e)) if e.is_foreign_key_violation() => {
                Err(StoreError::NotFound {
                    what: "chat",
                    id: chat_id.to_string(),
                })
            }
            Err(e) => Err(e).db(|| format!("storing the plan of chat '{chat_id}'")),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use crate::{NewChat, Store};
    use chrono::Utc;
    use suzent_core::{PermissionMode, PhaseDraft, Plan};

    #[tokio::test]
    async fn a_plan_round_trips_and_is_replaced_and_deleted_with_its_chat() {
        let store = Store::open_in_memory().await.unwrap();
        let chat = store
            .create_chat(&NewChat {
                id: "c1".into(),
                title: "t".into(),
                workspace: "/tmp".into(),
                model: None,
                mode: PermissionMode::Default,
                tools: None,
            })
            .await
            .unwrap();
        assert_eq!(store.get_plan(&chat.id).await.unwrap(), None);
        let phases = vec![PhaseDraft {
            id: "a".into(),
            title: "A".into(),
            capabilities: vec![],
        }];
        let mut plan = Plan::new("goal", phases, Utc::now()).unwrap();
        store.save_plan("c1", &plan).await.unwrap();
        plan.advance("a", None, Utc::now()).unwrap();
        store.save_plan("c1", &plan).await.unwrap();
        assert_eq!(store.get_plan("c1").await.unwrap(), Some(plan.clone()));
        assert!(matches!(
            store.save_plan("nope", &plan).await,
            Err(crate::StoreError::NotFound { what: "chat", .. })
        ));
        store.delete_chat("c1").await.unwrap();
        assert_eq!(store.get_plan("c1").await.unwrap(), None);
    }
}
