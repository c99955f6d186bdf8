//! `peer:<device>` and `peer:<device>/<agent>` addresses.

/// The prefix of addresses of agents on paired devices.
pub const PEER_PREFIX: &str = "peer:";

/// A parsed peer address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerAddressText {
    /// The device's short id (or full id).
    pub device: String,
    /// The agent there (a chat id), or none for the chat that receives this device's messages.
    pub agent: Option<String>,
}

/// Parses `peer:<device>[/<agent>]`; `None` when `text` is not a peer address.
///
/// Errors: a message naming the bad part.
pub fn parse_peer_address(text: &str) -> Option<Result<PeerAddressText, String>> {
    let rest = text.trim().strip_prefix(PEER_PREFIX)?;
    let (device, agent) = match rest.split_once('/') {
        Some((d, a)) => (d, Some(a)),
        None => (rest, None),
    };
    let ok_chars = |s: &str| {
        !s.is_empty()
            && s.len() <= 128
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    };
    if !ok_chars(device) {
        return Some(Err(format!(
            "'{text}' is not a peer address: expected peer:<device> or peer:<device>/<agent> with the device's id from agent_list"
        )));
    }
    if let Some(a) = agent
        && !ok_chars(a)
    {
        return Some(Err(format!(
            "'{text}': the agent part '{a}' is not an agent id"
        )));
    }
    Some(Ok(PeerAddressText {
        device: device.to_ascii_lowercase(),
        agent: agent.map(str::to_string),
    }))
}

/// The address text of a device (and agent).
pub fn peer_address(short_id: &str, agent: Option<&str>) -> String {
    match agent {
        Some(a) => format!("{PEER_PREFIX}{short_id}/{a}"),
        None => format!("{PEER_PREFIX}{short_id}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn peer_addresses_parse_with_and_without_an_agent() {
        assert_eq!(
            parse_peer_address("peer:ABCDEF123456"),
            Some(Ok(PeerAddressText {
                device: "abcdef123456".into(),
                agent: None
            }))
        );
        assert_eq!(
            parse_peer_address("peer:abcdef123456/chat-1"),
            Some(Ok(PeerAddressText {
                device: "abcdef123456".into(),
                agent: Some("chat-1".into())
            }))
        );
        assert_eq!(parse_peer_address("chat-1"), None);
        assert!(matches!(parse_peer_address("peer:"), Some(Err(_))));
        assert!(matches!(parse_peer_address("peer:a/b/c"), Some(Err(_))));
    }
}
