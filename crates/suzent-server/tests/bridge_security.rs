//! The bridge's refusals (R2-B05 and issue 15's Refusals), against the real server on
//! 127.0.0.1 with a real SQLite store: web pages, a process without `Origin`, a bad `Host`,
//! wrong, missing, reused and revoked credentials, and a second unpaired extension. In every case
//! the paired extension's session stays intact and nothing runs. A web page opening the
//! WebSocket from real Chromium is in `tests/extension_e2e.rs`.

mod support;

use pretty_assertions::assert_eq;
use serde_json::json;
use std::time::Duration;
use support::{EXT_A, EXT_B, Harness, Refused};
use suzent_server::protocol::{AppMessage, BridgeCommand, CommandOutcome, ExtensionMessage};

#[tokio::test]
async fn a_web_page_origin_is_refused_at_the_upgrade_and_the_paired_session_stays()
-> anyhow::Result<()> {
    let h = Harness::start().await?;
    let mut paired = h.pair(EXT_A).await?;
    for origin in ["http://127.0.0.1:9999", "http://evil.test:9999", "null"] {
        let refused = h.connect(Some(origin), None).await.err();
        assert_eq!(refused, Some(Refused::Http(403)), "{origin}");
    }
    assert_eq!(h.round_trip(&mut paired).await?, json!([]));
    assert_eq!(h.pairings_in_store().await?, 1);
    Ok(())
}

#[tokio::test]
async fn a_local_process_without_origin_is_refused_at_the_upgrade() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let mut paired = h.pair(EXT_A).await?;
    assert_eq!(h.connect(None, None).await.err(), Some(Refused::Http(403)));
    assert_eq!(h.round_trip(&mut paired).await?, json!([]));
    Ok(())
}

#[tokio::test]
async fn a_bad_host_header_is_refused_even_with_the_paired_origin() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let mut paired = h.pair(EXT_A).await?;
    let origin = format!("chrome-extension://{EXT_A}");
    for host in [
        "evil.test".to_string(),
        format!("evil.test:{}", h.port),
        format!("127.0.0.1:{}", h.port + 1),
    ] {
        let refused = h.connect(Some(&origin), Some(&host)).await.err();
        assert_eq!(refused, Some(Refused::Http(403)), "{host}");
    }
    assert_eq!(h.round_trip(&mut paired).await?, json!([]));
    Ok(())
}

#[tokio::test]
async fn a_post_or_preflight_from_a_page_gets_403_without_cors_headers() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let client = reqwest::Client::new();
    let url = format!("http://127.0.0.1:{}/v1/bridge", h.port);
    let post = client
        .post(&url)
        .header("origin", "http://127.0.0.1:9999")
        .body(r#"{"type":"hello","protocol":1}"#)
        .send()
        .await?;
    assert_eq!(post.status().as_u16(), 403);
    assert_eq!(post.headers().get("access-control-allow-origin"), None);
    let preflight = client
        .request(reqwest::Method::OPTIONS, &url)
        .header("origin", "http://evil.test:9999")
        .header("access-control-request-method", "POST")
        .send()
        .await?;
    assert_eq!(preflight.status().as_u16(), 403);
    assert_eq!(preflight.headers().get("access-control-allow-origin"), None);
    // Even the extension's origin gets no CORS headers (it needs none) and no other route.
    let other = client
        .post(format!("http://127.0.0.1:{}/v1/run", h.port))
        .header("origin", format!("chrome-extension://{EXT_A}"))
        .send()
        .await?;
    assert_eq!(other.status().as_u16(), 404);
    assert_eq!(other.headers().get("access-control-allow-origin"), None);
    Ok(())
}

#[tokio::test]
async fn a_wrong_credential_from_the_paired_extension_is_refused_after_the_hello()
-> anyhow::Result<()> {
    let h = Harness::start().await?;
    let mut paired = h.pair(EXT_A).await?;
    let mut ws = h.extension(EXT_A).await?;
    let wrong = format!("szb1_{}", "0".repeat(64));
    support::send(&mut ws, &support::hello(Some(&wrong))).await?;
    assert_eq!(
        support::closed(&mut ws).await?,
        (1008, "credential refused".to_string())
    );
    let mut ws = h.extension(EXT_A).await?;
    support::send(&mut ws, &support::hello(Some("not-even-the-shape"))).await?;
    assert_eq!(
        support::closed(&mut ws).await?,
        (1008, "credential refused".to_string())
    );
    assert_eq!(h.round_trip(&mut paired).await?, json!([]));
    Ok(())
}

#[tokio::test]
async fn without_a_credential_nothing_but_a_pairing_request_is_accepted() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let mut paired = h.pair(EXT_A).await?;
    let mut ws = h.extension(EXT_A).await?;
    support::send(&mut ws, &support::hello(None)).await?;
    let forged = ExtensionMessage::Response {
        id: 1,
        outcome: CommandOutcome::Ok {
            value: json!("injected"),
        },
    };
    support::send(&mut ws, &forged).await?;
    assert_eq!(
        support::closed(&mut ws).await?,
        (
            1008,
            "not paired: send pairRequest and wait for approval in Suzent".to_string()
        )
    );
    assert_eq!(h.round_trip(&mut paired).await?, json!([]));
    Ok(())
}

#[tokio::test]
async fn another_extension_cannot_use_the_paired_extensions_credential() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let mut paired = h.pair(EXT_A).await?;
    let mut ws = h.extension(EXT_B).await?;
    support::send(&mut ws, &support::hello(Some(&paired.credential))).await?;
    assert_eq!(
        support::closed(&mut ws).await?,
        (1008, "credential refused".to_string())
    );
    assert_eq!(h.round_trip(&mut paired).await?, json!([]));
    Ok(())
}

#[tokio::test]
async fn a_second_unpaired_extension_cannot_complete_another_extensions_pairing()
-> anyhow::Result<()> {
    let h = Harness::start().await?;
    let mut a = h.extension(EXT_A).await?;
    let mut b = h.extension(EXT_B).await?;
    for ws in [&mut a, &mut b] {
        support::send(ws, &support::hello(None)).await?;
        support::send(ws, &ExtensionMessage::PairRequest {}).await?;
    }
    let AppMessage::PairPending {
        request_id: a_req,
        code: a_code,
    } = support::recv(&mut a).await?
    else {
        anyhow::bail!("a got no pairPending");
    };
    let AppMessage::PairPending {
        request_id: b_req, ..
    } = support::recv(&mut b).await?
    else {
        anyhow::bail!("b got no pairPending");
    };
    let pending = h.server.pairings().pending();
    assert_eq!(pending.len(), 2);
    assert_eq!(
        pending
            .iter()
            .find(|p| p.id == a_req)
            .map(|p| (p.extension_id.as_str(), p.code.as_str())),
        Some((EXT_A, a_code.as_str()))
    );
    // The user approves A's request: only A's connection gets a credential.
    h.server.approve(&a_req).await?;
    let AppMessage::Paired { credential, .. } = support::recv(&mut a).await? else {
        anyhow::bail!("a was not paired");
    };
    assert_eq!(
        support::recv_within(&mut b, Duration::from_millis(300)).await?,
        None
    );
    // B presenting A's credential on a new connection is refused; A's session stays.
    let mut b2 = h.extension(EXT_B).await?;
    support::send(&mut b2, &support::hello(Some(&credential))).await?;
    assert_eq!(
        support::closed(&mut b2).await?,
        (1008, "credential refused".to_string())
    );
    // Declining B ends its request; approving it afterwards fails.
    h.server.reject(&b_req).await?;
    assert_eq!(
        support::recv(&mut b).await?,
        AppMessage::PairRejected {
            reason: "the pairing was declined in Suzent".into()
        }
    );
    assert!(h.server.approve(&b_req).await.is_err());
    let mut paired = support::Paired {
        ws: a,
        credential,
        pairing_id: String::new(),
    };
    assert_eq!(h.round_trip(&mut paired).await?, json!([]));
    assert_eq!(h.pairings_in_store().await?, 1);
    Ok(())
}

#[tokio::test]
async fn a_credential_already_in_use_by_a_live_connection_is_refused() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let mut paired = h.pair(EXT_A).await?;
    let mut again = h.extension(EXT_A).await?;
    support::send(&mut again, &support::hello(Some(&paired.credential))).await?;
    assert_eq!(
        support::closed(&mut again).await?,
        (
            1008,
            "credential already in use by another connection".to_string()
        )
    );
    assert_eq!(h.round_trip(&mut paired).await?, json!([]));
    Ok(())
}

#[tokio::test]
async fn revoking_closes_the_live_connection_at_once_and_the_credential_never_works_again()
-> anyhow::Result<()> {
    let h = Harness::start().await?;
    let mut paired = h.pair(EXT_A).await?;
    assert!(h.server.revoke(&paired.pairing_id).await?);
    assert_eq!(support::recv(&mut paired.ws).await?, AppMessage::Revoked {});
    assert_eq!(
        support::closed(&mut paired.ws).await?,
        (1008, "revoked".to_string())
    );
    let mut ws = h.extension(EXT_A).await?;
    support::send(&mut ws, &support::hello(Some(&paired.credential))).await?;
    assert_eq!(
        support::closed(&mut ws).await?,
        (1008, "credential refused".to_string())
    );
    assert!(h.server.hub().active().is_none());
    Ok(())
}

#[tokio::test]
async fn a_revocation_by_another_process_closes_the_live_connection() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let mut paired = h.pair(EXT_A).await?;
    // The CLI opens the same database file and revokes.
    let other = suzent_store::Store::open(&h.paths.database()).await?;
    assert!(other.revoke_browser_pairing(&paired.pairing_id).await?);
    let next = support::recv_within(&mut paired.ws, Duration::from_secs(5)).await?;
    assert_eq!(next, Some(AppMessage::Revoked {}));
    assert_eq!(
        support::closed(&mut paired.ws).await?,
        (1008, "revoked".to_string())
    );
    Ok(())
}

#[tokio::test]
async fn the_popup_revoking_revokes_the_pairing_in_the_app() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let mut paired = h.pair(EXT_A).await?;
    support::send(&mut paired.ws, &ExtensionMessage::Revoke {}).await?;
    assert_eq!(support::recv(&mut paired.ws).await?, AppMessage::Revoked {});
    let status = h.server.status().await?;
    assert!(
        status
            .pairings
            .iter()
            .all(|p| p.pairing.revoked_at.is_some())
    );
    Ok(())
}

#[tokio::test]
async fn a_timed_out_command_is_not_resent_and_its_late_answer_is_dropped() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let mut paired = h.pair(EXT_A).await?;
    let link = h
        .server
        .hub()
        .active()
        .ok_or_else(|| anyhow::anyhow!("no link"))?;
    let waiting = tokio::spawn({
        let link = link.clone();
        async move {
            link.request(BridgeCommand::Tabs {}, Duration::from_millis(200))
                .await
        }
    });
    let AppMessage::Request { id, .. } = support::recv(&mut paired.ws).await? else {
        anyhow::bail!("no request");
    };
    let result = waiting.await?;
    assert_eq!(result, Err(suzent_server::LinkError::Timeout(0)));
    // The late answer arrives; nothing was resent meanwhile.
    support::send(
        &mut paired.ws,
        &ExtensionMessage::Response {
            id,
            outcome: CommandOutcome::Ok {
                value: json!("late"),
            },
        },
    )
    .await?;
    assert_eq!(
        support::recv_within(&mut paired.ws, Duration::from_millis(300)).await?,
        None
    );
    assert_eq!(h.round_trip(&mut paired).await?, json!([]));
    Ok(())
}

#[tokio::test]
async fn approving_after_the_extension_left_stores_nothing() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let mut ws = h.extension(EXT_A).await?;
    support::send(&mut ws, &support::hello(None)).await?;
    support::send(&mut ws, &ExtensionMessage::PairRequest {}).await?;
    let AppMessage::PairPending { request_id, .. } = support::recv(&mut ws).await? else {
        anyhow::bail!("no pairPending");
    };
    drop(ws);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(h.server.approve(&request_id).await.is_err());
    assert_eq!(h.pairings_in_store().await?, 0);
    Ok(())
}

#[tokio::test]
async fn the_raw_credential_is_nowhere_in_the_data_dir_logs_or_audit() -> anyhow::Result<()> {
    let (logs, _guard) = support::capture_logs();
    let h = Harness::start().await?;
    let mut paired = h.pair(EXT_A).await?;
    assert_eq!(h.round_trip(&mut paired).await?, json!([]));
    // Reconnect with it, and a wrong one, so every path that handles a credential has run.
    drop(paired.ws);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut again = h.extension(EXT_A).await?;
    support::send(&mut again, &support::hello(Some(&paired.credential))).await?;
    assert!(matches!(
        support::recv(&mut again).await?,
        AppMessage::Welcome { .. }
    ));
    h.server.revoke(&paired.pairing_id).await?;
    h.audit.flush().await;
    let hash = suzent_server::credential_hash(&paired.credential);
    let found = support::grep_dir(h.dir.path(), paired.credential.as_bytes())?;
    assert_eq!(found, Vec::<String>::new());
    let hash_in_db = support::grep_dir(&h.paths.data_dir, hash.as_bytes())?;
    assert!(!hash_in_db.is_empty(), "the hash should be stored");
    let log_text = logs.text();
    assert!(!log_text.contains(&paired.credential));
    assert!(!log_text.contains(&paired.credential[5..]));
    let audit = std::fs::read_to_string(h.paths.audit_log())?;
    assert!(audit.contains("\"browser_pairing\""), "{audit}");
    assert!(!audit.contains(&paired.credential[5..]));
    Ok(())
}
