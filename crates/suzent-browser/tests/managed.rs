//! The browser core on a real Chromium that Suzent starts (managed mode), on fixture pages
//! served from 127.0.0.1 by the test. Cases from `shared/cases/browser.md` are named.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{harness, harness_with, ref_of, refs};
use pretty_assertions::assert_eq;
use serde_json::json;
use std::collections::BTreeSet;
use suzent_browser::SessionConfig;

/// R2-B01: every page within the budget, `page k/N`, totals, every ref exactly once; action
/// results stay short.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_20000_button_page_is_paginated_with_every_ref_exactly_once() -> anyhow::Result<()> {
    let mut h = harness().await;
    h.open("/big.html").await;
    let first = h.snapshot().await;
    let total: usize = first
        .split("page 1/")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("page 1/N in the header");
    assert!(
        first.contains("20000 interactive elements with refs"),
        "{}",
        &first[..400]
    );
    assert!(first.contains("untrusted data"));
    let mut all = refs(&first);
    assert!(first.chars().count() <= 20_000, "{}", first.chars().count());
    for k in 2..=total {
        let page = h.ok(json!({"command": "snapshot", "page": k})).await;
        assert!(page.contains(&format!("page {k}/{total}")));
        assert!(page.chars().count() <= 20_000);
        all.extend(refs(&page));
    }
    let unique: BTreeSet<&String> = all.iter().collect();
    assert_eq!(all.len(), 20_000);
    assert_eq!(unique.len(), 20_000);
    let expected: BTreeSet<String> = (0..20_000).map(|i| format!("s1e{i}")).collect();
    assert_eq!(
        unique.into_iter().cloned().collect::<BTreeSet<_>>(),
        expected
    );
    let last = h.ok(json!({"command": "snapshot", "page": total})).await;
    assert!(
        last.contains("Row 4999"),
        "the table's last row is on the last page"
    );
    let beyond = h
        .run(json!({"command": "snapshot", "page": total + 1}))
        .await;
    assert!(beyond.unwrap_err().contains("does not exist"));

    // An action's result is short: no tree.
    let target = ref_of(&first, "\"Item 7\"");
    let clicked = h.ok(json!({"command": "click", "ref": target})).await;
    assert!(clicked.len() < 400, "{clicked}");
    assert!(!clicked.contains("PAGE_CONTENT"));
    assert_eq!(h.fx.wait_hits(1).await, vec!["Item 7".to_string()]);
    let scrolled = h
        .ok(json!({"command": "scroll", "direction": "down", "amount": 900}))
        .await;
    assert!(
        scrolled.starts_with("scrolled the page to 0,"),
        "{scrolled}"
    );
    assert!(scrolled.len() < 300);
    h.shutdown().await;
    Ok(())
}

/// R2-B03: both frames listed with frame-qualified refs; each click lands in its own frame
/// (no parent click at those coordinates); fill works in both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn iframes_same_and_cross_origin_are_listed_clicked_and_filled_in_place() -> anyhow::Result<()>
{
    let mut h = harness().await;
    h.open("/frames.html").await;
    let snap = h.snapshot().await;
    let pays: Vec<&str> = snap.lines().filter(|l| l.contains("\"Pay\"")).collect();
    assert_eq!(pays.len(), 2, "{snap}");
    assert!(
        pays[0].contains("[ref=s1f1e0]") && pays[1].contains("[ref=s1f2e0]"),
        "{snap}"
    );
    assert!(
        snap.contains(&format!(
            "- iframe \"cross\" http://localhost:{}/inner.html [frame f2]",
            h.fx.b
        )),
        "{snap}"
    );
    for (frame, port) in [("f1", h.fx.a), ("f2", h.fx.b)] {
        let before = h.fx.hits().len();
        h.ok(json!({"command": "click", "ref": format!("s1{frame}e0")}))
            .await;
        let hits = h.fx.wait_hits(before + 1).await;
        assert_eq!(hits[before..].to_vec(), vec![format!("clicked-{port}")]);
        let before = hits.len();
        h.ok(json!({"command": "fill", "ref": format!("s1{frame}e1"), "value": "4242"}))
            .await;
        let hits = h.fx.wait_hits(before + 1).await;
        assert_eq!(hits[before..].to_vec(), vec![format!("filled-{port}-4242")]);
    }
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(
        !h.fx.hits().iter().any(|m| m.starts_with("parent")),
        "{:?}",
        h.fx.hits()
    );
    h.shutdown().await;
    Ok(())
}

/// R2-B04: the open root's button once and clickable, the slotted span once, the closed root
/// reported, the page never empty.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_shadow_roots_are_read_and_closed_ones_reported() -> anyhow::Result<()> {
    let mut h = harness().await;
    h.open("/shadow.html").await;
    let snap = h.snapshot().await;
    assert_eq!(snap.matches("\"Open\"").count(), 1, "{snap}");
    assert_eq!(snap.matches("Slotted").count(), 1, "{snap}");
    assert!(
        snap.contains("- x-closed (closed shadow root (not reachable))"),
        "{snap}"
    );
    let open = ref_of(&snap, "\"Open\"");
    h.ok(json!({"command": "click", "ref": open})).await;
    assert_eq!(h.fx.wait_hits(1).await, vec!["open-clicked".to_string()]);
    h.shutdown().await;
    Ok(())
}

/// Refs are scoped to their snapshot: a navigation or a newer snapshot makes them stale, and a
/// stale ref never hits another element.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refs_from_an_older_snapshot_or_document_are_stale() -> anyhow::Result<()> {
    let mut h = harness().await;
    h.open("/b.html").await;
    let first = h.snapshot().await;
    let old = ref_of(&first, "B button");
    let second = h.snapshot().await;
    let fresh = ref_of(&second, "B button");
    assert_eq!((old.as_str(), fresh.as_str()), ("s1e0", "s2e0"));
    let err = h
        .run(json!({"command": "click", "ref": old}))
        .await
        .unwrap_err();
    assert_eq!(err, "stale ref — take a new snapshot");
    // The document changes under the same snapshot number: the agent there has no such
    // snapshot.
    h.open("/forms.html").await;
    let err = h
        .run(json!({"command": "click", "ref": fresh}))
        .await
        .unwrap_err();
    assert_eq!(err, "stale ref — take a new snapshot");
    let err = h
        .run(json!({"command": "click", "ref": "e3"}))
        .await
        .unwrap_err();
    assert!(err.contains("is not a ref"), "{err}");
    assert!(h.fx.hits().is_empty(), "{:?}", h.fx.hits());
    h.shutdown().await;
    Ok(())
}

/// Forms: fill, select, type, press, hover, dblclick, click_coords; the password never shows
/// (R2-B15).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forms_are_filled_and_typed_and_passwords_never_show() -> anyhow::Result<()> {
    let mut h = harness().await;
    h.open("/forms.html").await;
    let snap = h.snapshot().await;
    let email = ref_of(&snap, "\"Email\"");
    let pw = ref_of(&snap, "\"Password\"");
    let plan = ref_of(&snap, "\"Plan\"");
    let notes = ref_of(&snap, "\"Notes\"");
    h.ok(json!({"command": "fill", "ref": email, "value": "ann@example.org"}))
        .await;
    h.ok(json!({"command": "fill", "ref": pw, "value": "hunter2-SECRET"}))
        .await;
    h.ok(json!({"command": "fill", "ref": plan, "value": "Pro plan"}))
        .await;
    h.ok(json!({"command": "type", "ref": notes, "text": "typed text"}))
        .await;
    let after = h.snapshot().await;
    assert!(!after.contains("hunter2"), "{after}");
    let pw_line = after.lines().find(|l| l.contains("\"Password\"")).unwrap();
    assert!(pw_line.contains("value=\"••••\" [password]"), "{pw_line}");
    assert!(after.contains("value=\"ann@example.org\""), "{after}");
    assert!(
        after.contains("combobox \"Plan\" value=\"Pro plan\""),
        "{after}"
    );
    assert!(after.contains("value=\"typed text\""), "{after}");
    let bad = h
        .run(json!({"command": "fill", "ref": ref_of(&after, "\"Plan\""), "value": "Gold"}))
        .await
        .unwrap_err();
    assert!(bad.contains("no option \"Gold\""), "{bad}");

    let keys = ref_of(&after, "\"Keys\"");
    h.ok(json!({"command": "press", "ref": keys, "key": "Control+a"}))
        .await;
    h.ok(json!({"command": "hover", "ref": ref_of(&after, "Hover me")}))
        .await;
    h.ok(json!({"command": "dblclick", "ref": ref_of(&after, "Double me")}))
        .await;
    h.ok(json!({"command": "click_coords", "x": 650, "y": 40}))
        .await;
    let hits = h.fx.wait_hits(4).await;
    assert_eq!(
        hits,
        vec![
            "key-a-ctrl".to_string(),
            "hovered".into(),
            "double".into(),
            "coords".into()
        ]
    );
    let submitted = h
        .ok(json!({"command": "type", "ref": ref_of(&after, "\"Email\""), "text": "", "submit": true}))
        .await;
    assert!(
        submitted.contains("the title is now \"Submitted\""),
        "{submitted}"
    );
    assert_eq!(h.fx.wait_hits(5).await[4], "submit-ann@example.org");
    h.shutdown().await;
    Ok(())
}

/// R2-B09: `fill` on a file input is refused and nothing reaches the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_inputs_are_refused() -> anyhow::Result<()> {
    let mut h = harness().await;
    let url = "http://evil.test:".to_string() + &h.fx.a.to_string() + "/upload.html";
    h.ok(json!({"command": "open", "url": url})).await;
    let snap = h.snapshot().await;
    let file = ref_of(&snap, "Your file");
    assert!(snap.contains("[type=file]"), "{snap}");
    for path in ["~/.ssh/id_ed25519", "../../.aws/credentials", "notes.txt"] {
        let err = h
            .run(json!({"command": "fill", "ref": file, "value": path}))
            .await
            .unwrap_err();
        assert!(err.starts_with("file upload not supported"), "{err}");
    }
    assert!(
        !h.fx
            .paths()
            .iter()
            .any(|p| p.starts_with("/upload ") || p == "/upload")
    );
    h.shutdown().await;
    Ok(())
}

/// R2-B08 end to end: refused schemes never navigate; the tab stays where it was and the
/// server sees nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dangerous_schemes_are_refused_before_any_navigation() -> anyhow::Result<()> {
    let mut h = harness().await;
    h.open("/b.html").await;
    let pages = |h: &common::Harness| -> Vec<String> {
        h.fx.paths()
            .into_iter()
            .filter(|p| p != "/favicon.ico")
            .collect()
    };
    let requests = pages(&h).len();
    let data = format!(
        "data:text/html,<script>fetch('http://127.0.0.1:{}/hit?m=data')</script>",
        h.fx.a
    );
    for (url, scheme) in [
        ("javascript:alert(1)".to_string(), "javascript:"),
        (data, "data:"),
        ("file:///etc/passwd".to_string(), "file:"),
        ("chrome://settings".to_string(), "chrome:"),
        ("view-source:https://docs.test".to_string(), "view-source:"),
    ] {
        let err = h
            .run(json!({"command": "open", "url": url}))
            .await
            .unwrap_err();
        assert!(err.contains(&format!("'{scheme}'")), "{err}");
    }
    let tabs = h.ok(json!({"command": "tabs"})).await;
    assert!(tabs.contains(&h.fx.url("/b.html")), "{tabs}");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(pages(&h).len(), requests);
    h.shutdown().await;
    Ok(())
}

/// R2-B13: a `target=_blank` link and `window.open` are reported as new tabs; results name
/// their tab; the new tab is used only once selected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn popups_and_new_tabs_are_reported_and_followed_explicitly() -> anyhow::Result<()> {
    let mut h = harness().await;
    h.open("/popup.html").await;
    let snap = h.snapshot().await;
    let clicked = h
        .ok(json!({"command": "click", "ref": ref_of(&snap, "Open B")}))
        .await;
    assert!(clicked.contains("opened new tab"), "{clicked}");
    assert!(clicked.contains(&h.fx.url("/b.html")), "{clicked}");
    let opened = h
        .ok(json!({"command": "click", "ref": ref_of(&snap, "Window open")}))
        .await;
    assert!(opened.contains("/b.html?from=open"), "{opened}");
    // The snapshot still comes from the selected tab, and says which.
    let again = h.snapshot().await;
    assert!(again.contains("/popup.html"), "{again}");
    let new_id = clicked
        .split("opened new tab ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap()
        .to_string();
    let tabs = h.ok(json!({"command": "tabs"})).await;
    assert!(tabs.contains(&format!("tab {new_id}")), "{tabs}");
    h.ok(json!({"command": "select_tab", "tab": new_id})).await;
    let b = h.snapshot().await;
    assert!(b.contains("Page B"), "{b}");
    h.shutdown().await;
    Ok(())
}

/// R2-B12 (d): a closed tab gives `tab closed` with a fresh list, never another tab.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_tab_is_reported_and_never_replaced_by_another() -> anyhow::Result<()> {
    let mut h = harness().await;
    h.open("/b.html").await;
    let url = h.fx.url("/forms.html");
    let opened = h
        .ok(json!({"command": "open", "url": url, "newTab": true}))
        .await;
    let id = opened
        .split("in tab ")
        .nth(1)
        .unwrap()
        .split(':')
        .next()
        .unwrap()
        .to_string();
    h.session.backend().close_tab(&id).await?;
    let err = h.run(json!({"command": "snapshot"})).await.unwrap_err();
    assert!(
        err.starts_with(&format!("tab closed: tab {id} no longer exists")),
        "{err}"
    );
    assert!(err.contains(&h.fx.url("/b.html")), "fresh list: {err}");
    h.shutdown().await;
    Ok(())
}

/// History and reloads: back, forward, reload, refresh.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn back_forward_reload_and_refresh_move_through_history() -> anyhow::Result<()> {
    let mut h = harness().await;
    h.open("/b.html").await;
    h.open("/forms.html").await;
    let back = h.ok(json!({"command": "back"})).await;
    assert!(
        back.contains("/b.html") && back.contains("Page B"),
        "{back}"
    );
    let fwd = h.ok(json!({"command": "forward"})).await;
    assert!(fwd.contains("/forms.html"), "{fwd}");
    let reload = h.ok(json!({"command": "reload"})).await;
    assert!(reload.starts_with("reloaded: "), "{reload}");
    let refresh = h.ok(json!({"command": "refresh"})).await;
    assert!(
        refresh.starts_with("reloaded (bypassing the cache)"),
        "{refresh}"
    );
    let none = h.run(json!({"command": "forward"})).await.unwrap_err();
    assert_eq!(none, "there is no later page in this tab's history");
    h.shutdown().await;
    Ok(())
}

/// R2-B10: downloads land in the session's directory under safe names, without exec bits;
/// executables are refused; results report path, size and type.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downloads_are_contained_named_safely_and_executables_refused() -> anyhow::Result<()> {
    let mut h = harness().await;
    h.open("/downloads.html").await;
    let snap = h.snapshot().await;
    let mut reports = String::new();
    for link in ["Get bashrc", "Get invoice", "Get script", "Get report"] {
        reports.push_str(
            &h.ok(json!({"command": "click", "ref": ref_of(&snap, link)}))
                .await,
        );
        tokio::time::sleep(std::time::Duration::from_millis(400)).await;
        reports.push_str(&h.ok(json!({"command": "tabs"})).await);
    }
    let dir = h.dir.path().join("downloads");
    let mut names: Vec<String> = std::fs::read_dir(&dir)?
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        vec!["_bashrc".to_string(), "report.pdf".to_string()],
        "{reports}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for n in &names {
            let mode = std::fs::metadata(dir.join(n))?.permissions().mode();
            assert_eq!(mode & 0o111, 0, "{n}");
        }
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("_bashrc"))?,
        "alias ll='ls -l'\n"
    );
    let saved = format!("download saved: {}", dir.join("report.pdf").display());
    assert!(reports.contains(&saved), "{reports}");
    assert!(reports.contains("(14 bytes, application/pdf)"), "{reports}");
    assert!(
        reports.contains("'invoice.exe'") && reports.contains("refused"),
        "{reports}"
    );
    assert!(reports.contains("'run.sh'"), "{reports}");
    h.shutdown().await;
    Ok(())
}

/// Managed mode keeps its profile: a cookie set in one run is sent in the next.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_managed_profile_keeps_a_cookie_across_two_runs() -> anyhow::Result<()> {
    let _guard = common::BROWSER_LOCK.lock().await;
    let fx = common::fixtures().await;
    let dir = tempfile::tempdir()?;
    let config = common::managed_config(dir.path());
    for (run, path, expect) in [
        (1, "/cookie-set", "cookie set"),
        (2, "/cookie-show", "cookie: suzent=kept-across-runs"),
    ] {
        let browser = suzent_browser::ManagedBrowser::launch(&config).await?;
        let mut session =
            suzent_browser::BrowserSession::new(browser.backend(), SessionConfig::default());
        let open = suzent_core::BrowserCommand::Open {
            url: fx.url(path),
            new_tab: false,
        };
        session.run(&open, None).await?;
        let snap = session
            .run(&suzent_core::BrowserCommand::Snapshot { page: None }, None)
            .await?;
        assert!(snap.text.contains(expect), "run {run}: {}", snap.text);
        browser.shutdown().await;
    }
    Ok(())
}

/// Small budgets still hold every ref once (the paginator with a real page).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_budget_splits_the_forms_page_without_losing_refs() -> anyhow::Result<()> {
    let mut h = harness_with(SessionConfig {
        page_budget: 1000,
        max_text: 100,
    })
    .await;
    h.open("/forms.html").await;
    let first = h.snapshot().await;
    let total: usize = first
        .split("page 1/")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    let mut all = refs(&first);
    for k in 2..=total {
        all.extend(refs(&h.ok(json!({"command": "snapshot", "page": k})).await));
    }
    let n = first
        .split(" interactive elements")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap();
    let expected: Vec<String> = (0..n).map(|i| format!("s1e{i}")).collect();
    assert_eq!(all, expected);
    h.shutdown().await;
    Ok(())
}

/// R2-B17 in managed mode: a click whose page blocks longer than the 20 s limit comes back as a
/// timeout of unknown outcome; it is not sent again (the handler runs once) and the late reply
/// is dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_click_is_reported_as_unknown_and_never_replayed() -> anyhow::Result<()> {
    let mut h = harness().await;
    h.open("/slow.html").await;
    let snap = h.snapshot().await;
    let err = h
        .run(json!({"command": "click", "ref": ref_of(&snap, "Slow")}))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        "timed out after 20 s waiting for the browser: the outcome is unknown and the command was not sent again; take a new snapshot before retrying"
    );
    tokio::time::sleep(std::time::Duration::from_secs(8)).await;
    assert_eq!(h.fx.hits(), vec!["slow-done".to_string()]);
    // The browser answers again afterwards.
    let again = h.snapshot().await;
    assert!(again.contains("\"Slow\""), "{again}");
    h.shutdown().await;
    Ok(())
}

/// A click reports the navigation it started, however it started it (a link, a script, a
/// fragment), and a click that navigates nowhere reports only what it changed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_reports_the_navigation_it_started_and_only_that() -> anyhow::Result<()> {
    let mut h = harness().await;
    let cases = [
        ("Go to B", Some("/b.html \"Page B\"")),
        ("Script navigation", Some("/b.html?from=script \"Page B\"")),
        ("Jump down", Some("/links.html#part \"Links\"")),
        ("Retitle", None),
        ("Do nothing", None),
    ];
    for (name, navigated) in cases {
        h.open("/links.html").await;
        let snap = h.snapshot().await;
        let clicked = h
            .ok(json!({"command": "click", "ref": ref_of(&snap, &format!("\"{name}\""))}))
            .await;
        match navigated {
            Some(to) => assert!(
                clicked.contains(&format!("the tab navigated to {}{to}", h.fx.url(""))),
                "{name}: {clicked}"
            ),
            None => assert!(!clicked.contains("navigated"), "{name}: {clicked}"),
        }
        assert!(!clicked.contains("opened new tab"), "{name}: {clicked}");
        if name == "Retitle" {
            assert!(
                clicked.ends_with("the title is now \"Retitled\""),
                "{clicked}"
            );
        }
    }
    h.shutdown().await;
    Ok(())
}
