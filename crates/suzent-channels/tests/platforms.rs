//! Each platform client against its test server on loopback (`suzent_tests`, the platform's
//! documented wire format): connect, receive a person's message, send a long text in ordered
//! parts within the platform's limit, and a refused token. The runtime's channel tests build
//! conversations, allow-lists and replies on top of these.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use futures::StreamExt;
use pretty_assertions::assert_eq;
use std::sync::Arc;
use std::time::Duration;
use suzent_channels::{
    AudioFile, Button, Channel, ChannelError, DiscordChannel, Incoming, MatrixChannel, Received,
    SlackChannel,
};
use suzent_tests::{
    ButtonServer, Delivered, DiscordServer, MatrixServer, PlatformServer, PressAnswer, Prompt,
    SlackServer,
};

const WAIT: Duration = Duration::from_secs(20);

/// The next message of `client`'s stream (within [`WAIT`]).
async fn next_message(
    incoming: &mut futures::stream::BoxStream<'static, Result<Received, ChannelError>>,
) -> Incoming {
    match next_received(incoming).await {
        Received::Message(message) => message,
        other => panic!("expected a message, got {other:?}"),
    }
}

/// The next thing `client`'s stream hands out (within [`WAIT`]).
async fn next_received(
    incoming: &mut futures::stream::BoxStream<'static, Result<Received, ChannelError>>,
) -> Received {
    tokio::time::timeout(WAIT, incoming.next())
        .await
        .expect("a message within the wait")
        .expect("the stream goes on")
        .expect("a message, not an error")
}

/// What a test checks of a received message: its conversation, sender, sender's name,
/// conversation's name, text and whether the conversation is private.
fn seen(message: &Incoming) -> (&str, &str, &str, &str, &str, bool) {
    (
        &message.conversation,
        &message.sender,
        &message.sender_name,
        &message.conversation_name,
        &message.text,
        message.private,
    )
}

/// A text of 9,000 characters in lines.
fn long_text() -> String {
    (0..900).map(|i| format!("line {i:04}\n")).collect()
}

/// `client` (built with the wrong secret `secret`) is refused, without the secret in the
/// error.
async fn is_refused(client: &dyn Channel, secret: &str) {
    let refused = client.connect().await.unwrap_err();
    assert!(
        matches!(refused, ChannelError::Unauthorized { .. }),
        "{refused:?}"
    );
    assert!(!refused.to_string().contains(secret), "{refused}");
}

async fn sends_in_ordered_parts(
    client: &dyn Channel,
    server: &impl PlatformServer,
    conversation: &str,
    limit: usize,
) {
    let before = server.delivered().len();
    let text = long_text();
    let ids = client.send(conversation, &text).await.unwrap();
    let parts = 9000usize.div_ceil(limit);
    assert_eq!(ids.len(), parts);
    let sent = server.wait_delivered(before + parts, WAIT).await[before..].to_vec();
    assert!(sent.iter().all(|m| m.conversation == conversation));
    assert!(sent.iter().all(|m| m.text.chars().count() <= limit));
    assert_eq!(
        sent.iter().map(|m| m.text.as_str()).collect::<String>(),
        text
    );
}

#[tokio::test]
async fn discord_connects_receives_over_the_gateway_and_sends_in_2000_character_parts()
-> anyhow::Result<()> {
    let server = DiscordServer::start("DISCORD.TEST.TOKEN").await;
    let client = Arc::new(DiscordChannel::new(
        "DISCORD.TEST.TOKEN",
        Some(&server.base_url()),
    )?);
    let me = client.connect().await?;
    assert_eq!(me.name, "Suzent Test Bot");
    let mut incoming = Arc::clone(&client).receive();
    let dm = server.push_direct("4242", "Ada", "hello there");
    let message = next_message(&mut incoming).await;
    assert_eq!(
        (
            message.conversation.as_str(),
            message.sender.as_str(),
            message.sender_name.as_str(),
            message.conversation_name.as_str(),
            message.text.as_str(),
            message.private
        ),
        (dm.as_str(), "4242", "Ada", "Ada", "hello there", true)
    );
    server.push_guild(1, 555, 4242, "Ada", "in the guild");
    let message = next_message(&mut incoming).await;
    assert_eq!(
        (
            message.conversation.as_str(),
            message.conversation_name.as_str(),
            message.private
        ),
        ("555", "channel 555", false)
    );
    // The session identified (op 2) once.
    assert_eq!(server.opcodes().iter().filter(|op| **op == 2).count(), 1);
    client.send_one(&dm, "hi Ada").await?;
    assert_eq!(
        server.wait_delivered(1, WAIT).await,
        vec![Delivered {
            conversation: dm.clone(),
            text: "hi Ada".into()
        }]
    );
    sends_in_ordered_parts(client.as_ref(), &server, &dm, 2000).await;
    // While the stream is polled, heartbeats (op 1) go out and are answered: the session
    // stays up (one Identify).
    assert!(
        tokio::time::timeout(Duration::from_millis(2500), incoming.next())
            .await
            .is_err()
    );
    let opcodes = server.opcodes();
    assert!(opcodes.contains(&1), "{opcodes:?}");
    assert_eq!(opcodes.iter().filter(|op| **op == 2).count(), 1);

    is_refused(
        &DiscordChannel::new("WRONG.TOKEN", Some(&server.base_url()))?,
        "WRONG.TOKEN",
    )
    .await;
    Ok(())
}

#[tokio::test]
async fn slack_connects_receives_over_socket_mode_acknowledges_and_sends_in_4000_character_parts()
-> anyhow::Result<()> {
    let server = SlackServer::start("xoxb-test-bot", "xapp-test-app").await;
    let client = Arc::new(SlackChannel::new(
        "xoxb-test-bot xapp-test-app",
        Some(&server.base_url()),
    )?);
    let me = client.connect().await?;
    assert_eq!(me.username.as_deref(), Some("suzent"));
    let mut incoming = Arc::clone(&client).receive();
    let dm = server.push_direct("U0ADA42", "Ada", "hello there");
    let message = next_message(&mut incoming).await;
    assert_eq!(
        (
            message.conversation.as_str(),
            message.sender.as_str(),
            message.sender_name.as_str(),
            message.text.as_str(),
            message.private
        ),
        (dm.as_str(), "U0ADA42", "Ada", "hello there", true)
    );
    server.push_channel("C0GENERAL", "U0ADA42", "Ada", "in a channel");
    let message = next_message(&mut incoming).await;
    assert_eq!(
        (message.conversation.as_str(), message.private),
        ("C0GENERAL", false)
    );
    // Both envelopes are acknowledged.
    for _ in 0..100 {
        if server.acked().len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(server.acked().len(), 2, "{:?}", server.acked());
    sends_in_ordered_parts(client.as_ref(), &server, &dm, 4000).await;

    is_refused(
        &SlackChannel::new("xoxb-wrong xapp-test-app", Some(&server.base_url()))?,
        "xoxb-wrong",
    )
    .await;
    Ok(())
}

#[tokio::test]
async fn matrix_joins_the_invited_room_receives_by_long_polling_sync_and_sends()
-> anyhow::Result<()> {
    let server = MatrixServer::start("syt_test_token").await;
    let client = Arc::new(MatrixChannel::new(
        "syt_test_token",
        Some(&server.base_url()),
        2,
    )?);
    let me = client.connect().await?;
    assert_eq!(me.id, "@suzent:suzent.test");
    let mut incoming = Arc::clone(&client).receive();
    let room = server.push_direct("@ada:suzent.test", "Ada", "hello there");
    let message = next_message(&mut incoming).await;
    assert_eq!(
        (
            message.conversation.as_str(),
            message.sender.as_str(),
            message.sender_name.as_str(),
            message.conversation_name.as_str(),
            message.text.as_str(),
            message.private
        ),
        (
            room.as_str(),
            "@ada:suzent.test",
            "Ada",
            "Ada",
            "hello there",
            true
        )
    );
    client.send_one(&room, "hi Ada").await?;
    // The bot's own message comes back in the next sync and is not passed on.
    server.push_in(
        "!team:suzent.test",
        Some("Team"),
        "@bob:suzent.test",
        "Bob",
        "standup?",
    );
    let message = next_message(&mut incoming).await;
    assert_eq!(
        (
            message.conversation.as_str(),
            message.conversation_name.as_str(),
            message.text.as_str()
        ),
        ("!team:suzent.test", "Team", "standup?")
    );
    assert!(server.long_polls() > 0);
    let before = server.delivered().len();
    let huge: String = "word ".repeat(14_000);
    let ids = client.send(&room, &huge).await?;
    assert_eq!(ids.len(), 3);
    let sent = server.wait_delivered(before + 3, WAIT).await[before..].to_vec();
    assert!(sent.iter().all(|m| m.text.len() <= 30_000));
    assert_eq!(
        sent.iter().map(|m| m.text.as_str()).collect::<String>(),
        huge
    );

    is_refused(
        &MatrixChannel::new("syt_wrong", Some(&server.base_url()), 2)?,
        "syt_wrong",
    )
    .await;
    Ok(())
}

/// A small WAV file's bytes (a header and a ramp).
fn wav_bytes() -> Vec<u8> {
    let mut bytes = b"RIFF\x24\x08\x00\x00WAVEfmt ".to_vec();
    bytes.extend((0..2048u32).map(|i| (i % 251) as u8));
    bytes
}

/// `client` sends an audio file to `conversation`; the server has it, bytes and name.
async fn sends_audio(client: &dyn Channel, server: &impl PlatformServer, conversation: &str) {
    let audio = AudioFile {
        file_name: "clip.wav".into(),
        mime_type: "audio/wav".into(),
        bytes: wav_bytes(),
        duration_ms: 1200,
    };
    client.send_audio(conversation, &audio).await.unwrap();
    let uploads = server.wait_uploaded(1, WAIT).await;
    assert_eq!(uploads.len(), 1);
    assert_eq!(
        (
            uploads[0].conversation.as_str(),
            uploads[0].file_name.as_str()
        ),
        (conversation, "clip.wav")
    );
    assert!(uploads[0].bytes == audio.bytes, "the bytes arrive whole");
    // Above the platform's own limit, the platform's answer is a clear "too large".
    server.limit_uploads(100);
    let refused = client.send_audio(conversation, &audio).await.unwrap_err();
    assert!(
        matches!(refused, ChannelError::TooLarge { bytes, .. } if bytes == audio.bytes.len() as u64),
        "{refused:?}"
    );
    // Above the limit the client knows, nothing is sent at all.
    let huge = AudioFile {
        bytes: vec![0; usize::try_from(client.upload_limit()).unwrap() + 1],
        ..audio
    };
    let before = server.uploads().len();
    assert!(matches!(
        client.send_audio(conversation, &huge).await,
        Err(ChannelError::TooLarge { .. })
    ));
    assert_eq!(server.uploads().len(), before);
}

/// `client` sends a message with two buttons to `conversation`; a press of the second comes
/// back on the stream with its data, conversation and sender, and the answer reaches the
/// server.
async fn round_trips_a_press<S: ButtonServer>(
    client: Arc<dyn Channel>,
    server: &S,
    user: &str,
    conversation: &str,
) {
    assert!(client.has_buttons());
    let buttons = [
        Button {
            label: "Allow once".into(),
            data: "token-allow".into(),
        },
        Button {
            label: "Reject".into(),
            data: "token-reject".into(),
        },
    ];
    client
        .send_buttons(conversation, "May I?", &buttons)
        .await
        .unwrap();
    let prompts = server.prompts().wait(1, WAIT).await;
    assert_eq!(
        prompts,
        vec![Prompt {
            conversation: conversation.to_string(),
            text: "May I?".into(),
            buttons: vec![
                ("Allow once".into(), "token-allow".into()),
                ("Reject".into(), "token-reject".into())
            ],
        }]
    );
    let mut incoming = Arc::clone(&client).receive();
    let pressed = server.push_press(user, "Ada", conversation, "token-reject");
    // (Messages pushed before, not yet taken, come first.)
    let press = loop {
        if let Received::Press(press) = next_received(&mut incoming).await {
            break press;
        }
    };
    assert_eq!(
        (
            press.conversation.as_str(),
            press.sender.as_str(),
            press.data.as_str()
        ),
        (conversation, user, "token-reject")
    );
    client.answer_press(&press, "Rejected.").await.unwrap();
    assert_eq!(
        server.press_answers().wait(1, WAIT).await,
        vec![PressAnswer {
            press: pressed,
            text: "Rejected.".into()
        }]
    );
}

#[tokio::test]
async fn discord_sends_audio_as_an_attachment_and_round_trips_a_button_press() -> anyhow::Result<()>
{
    let server = DiscordServer::start("DISCORD.TEST.TOKEN").await;
    let client: Arc<dyn Channel> = Arc::new(DiscordChannel::new(
        "DISCORD.TEST.TOKEN",
        Some(&server.base_url()),
    )?);
    client.connect().await?;
    let dm = server.push_direct("4242", "Ada", "hello");
    sends_audio(client.as_ref(), &server, &dm).await;
    assert_eq!(server.uploads().all()[0].method, "files[0]");
    round_trips_a_press(client, &server, "4242", &dm).await;
    Ok(())
}

#[tokio::test]
async fn slack_uploads_audio_with_the_external_upload_flow_and_round_trips_a_button_press()
-> anyhow::Result<()> {
    let server = SlackServer::start("xoxb-1-BOT", "xapp-1-APP").await;
    let client: Arc<dyn Channel> = Arc::new(SlackChannel::new(
        "xoxb-1-BOT xapp-1-APP",
        Some(&server.base_url()),
    )?);
    client.connect().await?;
    sends_audio(client.as_ref(), &server, "D0ADA42").await;
    let upload = &server.uploads().all()[0];
    assert_eq!(
        (upload.mime_type.as_str(), upload.method.as_str()),
        ("audio/wav", "files.completeUploadExternal")
    );
    round_trips_a_press(client, &server, "U0ADA42", "D0ADA42").await;
    Ok(())
}

#[tokio::test]
async fn matrix_uploads_audio_to_the_media_repository_and_sends_an_m_audio_event()
-> anyhow::Result<()> {
    let server = MatrixServer::start("syt_MATRIX_TEST").await;
    let client: Arc<dyn Channel> = Arc::new(MatrixChannel::new(
        "syt_MATRIX_TEST",
        Some(&server.base_url()),
        1,
    )?);
    client.connect().await?;
    let room = server.push_direct("@ada:suzent.test", "Ada", "hello");
    // The bot joins the room it is invited to while it receives.
    let mut incoming = Arc::clone(&client).receive();
    next_message(&mut incoming).await;
    sends_audio(client.as_ref(), &server, &room).await;
    let upload = &server.uploads().all()[0];
    assert_eq!(
        (upload.mime_type.as_str(), upload.method.as_str()),
        ("audio/wav", "m.audio")
    );
    assert!(!client.has_buttons());
    Ok(())
}

/// Against a real homeserver (Synapse from PyPI, `suzent_tests::synapse`): the messages a person
/// wrote before the bot joined their direct chat all arrive (a sync cuts a room's timeline at 10
/// events by default, and a room's creation alone takes 7); a direct chat is told from a group
/// room by its members (Synapse sends no room summary unless members are lazy-loaded);
/// a burst of 120 messages between two syncs arrives whole and in order (the cut timeline's
/// gap is read back); the bot's own messages are not passed on; a text of three parts arrives
/// in order; room ids have no server part (room version 12).
#[tokio::test]
async fn matrix_on_synapse_misses_no_message_and_tells_direct_chats_from_group_rooms()
-> anyhow::Result<()> {
    if suzent_tests::synapse::skip_without_synapse(module_path!()) {
        return Ok(());
    }
    let server = suzent_tests::SynapseServer::start().await;
    let synapse = server.synapse();
    let ada = synapse.register("ada", "Ada").await;
    let bob = synapse.register("bob", "Bob").await;
    let client = Arc::new(MatrixChannel::new(
        &server.bot().token,
        Some(&synapse.base_url()),
        2,
    )?);
    let me = client.connect().await?;
    assert_eq!(me.id, suzent_tests::synapse::SYNAPSE_BOT);

    // Ada opens a direct chat and writes twelve messages before the bot runs.
    let dm = ada.create_room(None, &[&me.id]).await;
    assert!(!dm.contains(':'), "a room version 12 id: {dm}");
    for i in 1..=12 {
        ada.send_text(&dm, &format!("hello {i}")).await;
    }
    let mut incoming = Arc::clone(&client).receive();
    for i in 1..=12 {
        let message = next_message(&mut incoming).await;
        assert_eq!(
            seen(&message),
            (
                dm.as_str(),
                ada.user_id.as_str(),
                "Ada",
                "Ada",
                format!("hello {i}").as_str(),
                true
            )
        );
    }

    // The bot's reply reaches Ada; its own message is not handed out again.
    client.send_one(&dm, "hi Ada").await?;
    ada.send_text(&dm, "thanks").await;
    assert_eq!(next_message(&mut incoming).await.text, "thanks");
    let seen = ada.messages(&dm).await;
    assert_eq!(
        seen.iter()
            .filter(|m| m.sender == me.id)
            .map(|m| m.body.as_str())
            .collect::<Vec<_>>(),
        vec!["hi Ada"]
    );

    // A named room of three is a group conversation.
    let team = bob.create_room(Some("Team"), &[&ada.user_id, &me.id]).await;
    ada.join(&team).await;
    bob.send_text(&team, "standup?").await;
    let message = next_message(&mut incoming).await;
    assert_eq!(
        (
            message.conversation.as_str(),
            message.conversation_name.as_str(),
            message.sender_name.as_str(),
            message.text.as_str(),
            message.private
        ),
        (team.as_str(), "Team", "Bob", "standup?", false)
    );

    // So is a room of three without a name (the old guess, two members, made it private).
    let trio = bob.create_room(None, &[&ada.user_id, &me.id]).await;
    ada.join(&trio).await;
    bob.send_text(&trio, "lunch?").await;
    let message = next_message(&mut incoming).await;
    assert_eq!(
        (
            message.conversation.as_str(),
            message.text.as_str(),
            message.private
        ),
        (trio.as_str(), "lunch?", false)
    );
    assert_eq!(message.conversation_name, format!("room {trio}"));

    // 120 messages while the stream is not read: the next sync holds the last 100 of them,
    // the 20 before are read back.
    let burst: Vec<String> = (0..120).map(|i| format!("burst {i:03}")).collect();
    for text in &burst {
        ada.send_text(&team, text).await;
    }
    let mut received = Vec::new();
    for _ in 0..burst.len() {
        received.push(next_message(&mut incoming).await.text);
    }
    assert_eq!(received, burst);

    // A text of three parts arrives in order, read back as Ada sees it.
    let huge: String = "word ".repeat(14_000);
    let ids = client.send(&dm, &huge).await?;
    assert_eq!(ids.len(), 3);
    let parts: Vec<String> = ada
        .messages(&dm)
        .await
        .into_iter()
        .filter(|m| m.sender == me.id)
        .skip(1)
        .map(|m| m.body)
        .collect();
    assert_eq!(parts.len(), 3);
    assert!(parts.iter().all(|p| p.len() <= 30_000));
    assert_eq!(parts.concat(), huge);

    is_refused(
        &MatrixChannel::new("syt_wrong", Some(&synapse.base_url()), 2)?,
        "syt_wrong",
    )
    .await;
    Ok(())
}
