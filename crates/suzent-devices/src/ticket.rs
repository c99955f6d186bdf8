//! Pairing tickets: what one device shows (a code to type, and the same as a QR link) so that
//! another can reach it and prove it saw it.
//!
//! A ticket carries the showing device's public key (the connection is pinned to it), its direct
//! addresses, its home relay when relays are on, and an 80-bit one-time secret. The code is the
//! ticket in base32 with a 16-bit checksum (a typo is caught before anything is sent), in
//! groups of five: `sz1-xxxxx-xxxxx-...`. The QR link is `suzent://pair?code=<code>`; links are
//! parsed strictly: another scheme (`ws:`, `http:`...), user info, a port, a path, an unknown or
//! repeated parameter is refused with a clear error.

use crate::error::DeviceError;
use crate::id::DeviceId;
use crate::words::WORDS;
use sha2::{Digest, Sha256};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Bytes of the one-time secret.
pub const SECRET_BYTES: usize = 10;
/// How many confirmation words both devices show.
pub const WORD_COUNT: usize = 4;
/// Prefix of a code.
pub const CODE_PREFIX: &str = "sz1";
/// Scheme and host of a pairing link.
pub const LINK_PREFIX: &str = "suzent://pair";
const VERSION: u8 = 1;
const MAX_ADDRS: usize = 8;

/// What a device shows to be paired with.
#[derive(Clone, PartialEq, Eq)]
pub struct PairingTicket {
    /// The showing device (the connection is pinned to this key).
    pub device: DeviceId,
    /// Its direct addresses.
    pub addrs: Vec<SocketAddr>,
    /// Its home relay, when relays are on.
    pub relay: Option<String>,
    /// The one-time secret.
    pub secret: [u8; SECRET_BYTES],
}

impl std::fmt::Debug for PairingTicket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PairingTicket")
            .field("device", &self.device)
            .field("addrs", &self.addrs)
            .field("relay", &self.relay)
            .finish_non_exhaustive()
    }
}

fn bad(message: impl Into<String>) -> DeviceError {
    DeviceError::BadCode(message.into())
}

impl PairingTicket {
    /// The code to type: `sz1-` and base32 groups of five, lower case.
    pub fn code(&self) -> String {
        let mut bytes = vec![VERSION];
        bytes.extend_from_slice(self.device.as_bytes());
        bytes.extend_from_slice(&self.secret);
        let addrs = &self.addrs[..self.addrs.len().min(MAX_ADDRS)];
        bytes.push(u8::try_from(addrs.len()).unwrap_or(0));
        for addr in addrs {
            match addr.ip() {
                IpAddr::V4(ip) => {
                    bytes.push(4);
                    bytes.extend_from_slice(&ip.octets());
                }
                IpAddr::V6(ip) => {
                    bytes.push(6);
                    bytes.extend_from_slice(&ip.octets());
                }
            }
            bytes.extend_from_slice(&addr.port().to_be_bytes());
        }
        let relay = self.relay.as_deref().unwrap_or("");
        let relay = &relay.as_bytes()[..relay.len().min(255)];
        bytes.push(u8::try_from(relay.len()).unwrap_or(0));
        bytes.extend_from_slice(relay);
        let sum = Sha256::digest(&bytes);
        bytes.extend_from_slice(&sum[..2]);
        let text = data_encoding::BASE32_NOPAD
            .encode(&bytes)
            .to_ascii_lowercase();
        let groups: Vec<String> = text
            .as_bytes()
            .chunks(5)
            .map(|c| String::from_utf8_lossy(c).into_owned())
            .collect();
        format!("{CODE_PREFIX}-{}", groups.join("-"))
    }

    /// The QR payload: `suzent://pair?code=<code>`.
    pub fn link(&self) -> String {
        format!("{LINK_PREFIX}?code={}", self.code())
    }

    /// Parses what a user entered: a code (any case, spaces and dashes anywhere) or a pairing
    /// link.
    ///
    /// Errors: [`DeviceError::BadCode`] saying what is wrong (a typo, a link with credentials,
    /// a repeated parameter, another scheme...).
    pub fn parse(input: &str) -> Result<PairingTicket, DeviceError> {
        let input = input.trim();
        if input.is_empty() {
            return Err(bad("the code is empty"));
        }
        if input.contains(':') {
            return Self::parse_code(&code_of_link(input)?);
        }
        Self::parse_code(input)
    }

    fn parse_code(code: &str) -> Result<PairingTicket, DeviceError> {
        let compact: String = code
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '-')
            .collect::<String>()
            .to_ascii_lowercase();
        let body = compact.strip_prefix(CODE_PREFIX).ok_or_else(|| {
            bad(format!(
                "'{}' is not a Suzent pairing code (codes start with '{CODE_PREFIX}-')",
                shown(code)
            ))
        })?;
        let bytes = data_encoding::BASE32_NOPAD
            .decode(body.to_ascii_uppercase().as_bytes())
            .map_err(|_| {
                bad("the code has a character that cannot be in a code; check it for typos")
            })?;
        if bytes.len() < 1 + 32 + SECRET_BYTES + 2 + 2 {
            return Err(bad("the code is too short; check that it was copied whole"));
        }
        let (payload, sum) = bytes.split_at(bytes.len() - 2);
        if Sha256::digest(payload)[..2] != *sum {
            return Err(bad(
                "the code's checksum does not match: it was mistyped or cut",
            ));
        }
        let mut r = Reader {
            bytes: payload,
            at: 0,
        };
        let version = r.byte()?;
        if version != VERSION {
            return Err(bad(format!(
                "code version {version} is not supported by this Suzent (it reads version {VERSION})"
            )));
        }
        let key: [u8; 32] = r.array()?;
        let device = DeviceId::from_bytes(&key)?;
        let secret: [u8; SECRET_BYTES] = r.array()?;
        let count = usize::from(r.byte()?);
        if count > MAX_ADDRS {
            return Err(bad(format!(
                "the code lists {count} addresses (at most {MAX_ADDRS})"
            )));
        }
        let mut addrs = Vec::with_capacity(count);
        for _ in 0..count {
            let ip = match r.byte()? {
                4 => IpAddr::V4(Ipv4Addr::from(r.array::<4>()?)),
                6 => IpAddr::V6(Ipv6Addr::from(r.array::<16>()?)),
                other => return Err(bad(format!("unknown address kind {other} in the code"))),
            };
            let port = u16::from_be_bytes(r.array()?);
            addrs.push(SocketAddr::new(ip, port));
        }
        let relay_len = usize::from(r.byte()?);
        let relay = r.take(relay_len)?;
        let relay = if relay.is_empty() {
            None
        } else {
            let text =
                std::str::from_utf8(relay).map_err(|_| bad("the relay in the code is not text"))?;
            if !text.starts_with("https://") {
                return Err(bad(format!(
                    "the relay '{text}' in the code is not an https URL"
                )));
            }
            Some(text.to_string())
        };
        if r.at != payload.len() {
            return Err(bad("the code has trailing data"));
        }
        Ok(PairingTicket {
            device,
            addrs,
            relay,
            secret,
        })
    }

    /// The QR code of [`PairingTicket::link`] as an SVG document (black on white, quiet zone
    /// included).
    ///
    /// Errors: [`DeviceError::BadCode`] when the link does not fit in a QR code.
    pub fn qr_svg(&self) -> Result<String, DeviceError> {
        let code = qrcode::QrCode::with_error_correction_level(self.link(), qrcode::EcLevel::M)
            .map_err(|e| bad(format!("the pairing link does not fit in a QR code: {e}")))?;
        Ok(code
            .render::<qrcode::render::svg::Color<'_>>()
            .min_dimensions(240, 240)
            .build())
    }

    /// The QR code of [`PairingTicket::link`] drawn with Unicode half blocks, for a terminal.
    ///
    /// Errors: [`DeviceError::BadCode`] when the link does not fit in a QR code.
    pub fn qr_text(&self) -> Result<String, DeviceError> {
        let code = qrcode::QrCode::with_error_correction_level(self.link(), qrcode::EcLevel::L)
            .map_err(|e| bad(format!("the pairing link does not fit in a QR code: {e}")))?;
        Ok(code
            .render::<qrcode::render::unicode::Dense1x2>()
            .dark_color(qrcode::render::unicode::Dense1x2::Light)
            .light_color(qrcode::render::unicode::Dense1x2::Dark)
            .build())
    }

    /// What the joining device sends to prove it saw this ticket: SHA-256 over a label, both
    /// keys and the secret. Bound to both keys, so it is worthless on another connection.
    pub fn proof(&self, joiner: &DeviceId) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(b"suzent-pair-proof-v1");
        h.update(self.device.as_bytes());
        h.update(joiner.as_bytes());
        h.update(self.secret);
        h.finalize().into()
    }

    /// The confirmation words both devices show: from SHA-256 over a label, both keys and the
    /// secret, so they match only when both sides talk to each other with this ticket.
    pub fn words(&self, joiner: &DeviceId) -> Vec<String> {
        let mut h = Sha256::new();
        h.update(b"suzent-pair-words-v1");
        h.update(self.device.as_bytes());
        h.update(joiner.as_bytes());
        h.update(self.secret);
        let digest = h.finalize();
        digest[..WORD_COUNT]
            .iter()
            .map(|b| WORDS[usize::from(*b)].to_string())
            .collect()
    }
}

/// At most 24 characters of user input, for error messages (never a whole code).
fn shown(input: &str) -> String {
    let s: String = input.chars().take(24).collect();
    if input.chars().count() > 24 {
        format!("{s}…")
    } else {
        s
    }
}

/// The code inside a pairing link, refusing anything but `suzent://pair?code=<code>`.
fn code_of_link(input: &str) -> Result<String, DeviceError> {
    let (scheme, rest) = input.split_once("://").ok_or_else(|| {
        bad(format!(
            "'{}' is neither a code nor a pairing link",
            shown(input)
        ))
    })?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "suzent" {
        return Err(bad(match scheme.as_str() {
            "ws" | "http" => format!(
                "'{scheme}://' links are refused: pairing runs only over Suzent's encrypted channel pinned to the device key, never plain {scheme}"
            ),
            "wss" | "https" => format!(
                "'{scheme}://' links are refused: pairing runs only over Suzent's own channel pinned to the device key (suzent://pair links)"
            ),
            _ => format!("'{scheme}://' is not a pairing link (expected {LINK_PREFIX}?code=...)"),
        }));
    }
    let (authority, query) = match rest.split_once('?') {
        Some((a, q)) => (a, q),
        None => (rest, ""),
    };
    if authority.contains('@') {
        return Err(bad(
            "pairing links with embedded credentials (user@ or user:password@) are refused",
        ));
    }
    if authority.contains('#') || query.contains('#') {
        return Err(bad("pairing links with a fragment (#...) are refused"));
    }
    if !authority.eq_ignore_ascii_case("pair") {
        return Err(bad(format!(
            "'suzent://{}' is not a pairing link (expected {LINK_PREFIX}?code=...)",
            shown(authority)
        )));
    }
    let mut code = None;
    for part in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = part.split_once('=').unwrap_or((part, ""));
        match name {
            "code" => {
                if code.is_some() {
                    return Err(bad("the pairing link repeats the parameter 'code'"));
                }
                if value.contains('%') || value.contains('+') {
                    return Err(bad(
                        "the code in the pairing link is encoded; codes never need encoding",
                    ));
                }
                code = Some(value.to_string());
            }
            other => {
                return Err(bad(format!(
                    "the pairing link has an unknown parameter '{}'",
                    shown(other)
                )));
            }
        }
    }
    code.filter(|c| !c.is_empty())
        .ok_or_else(|| bad("the pairing link has no code"))
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], DeviceError> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.bytes.len());
        let end =
            end.ok_or_else(|| bad("the code ends too early; check that it was copied whole"))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }
    fn byte(&mut self) -> Result<u8, DeviceError> {
        Ok(self.take(1)?[0])
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], DeviceError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }
}

/// A fresh one-time secret from the OS's random source.
///
/// Errors: [`DeviceError::Key`] when the OS gives no randomness.
pub fn fresh_secret() -> Result<[u8; SECRET_BYTES], DeviceError> {
    let mut secret = [0u8; SECRET_BYTES];
    getrandom::fill(&mut secret).map_err(|e| DeviceError::Key {
        message: format!("no randomness for the pairing secret: {e}"),
    })?;
    Ok(secret)
}

/// Compares two byte strings in time independent of where they differ.
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use pretty_assertions::assert_eq;

    fn ticket() -> PairingTicket {
        PairingTicket {
            device: DeviceId::from_public_key(iroh::SecretKey::generate().public()),
            addrs: vec![
                "127.0.0.1:4433".parse().unwrap(),
                "[::1]:4434".parse().unwrap(),
            ],
            relay: Some("https://relay.example/".into()),
            secret: fresh_secret().unwrap(),
        }
    }

    #[test]
    fn a_code_and_its_link_parse_back_to_the_ticket() {
        let t = ticket();
        assert_eq!(PairingTicket::parse(&t.code()).unwrap(), t);
        assert_eq!(PairingTicket::parse(&t.link()).unwrap(), t);
        // Case, spaces and dashes do not matter.
        let typed = t.code().to_ascii_uppercase().replace('-', " ");
        assert_eq!(PairingTicket::parse(&typed).unwrap(), t);
    }

    #[test]
    fn a_typo_is_caught_by_the_checksum() {
        let code = ticket().code();
        let mut chars: Vec<char> = code.chars().collect();
        let i = chars.len() - 8;
        chars[i] = if chars[i] == 'a' { 'b' } else { 'a' };
        let typo: String = chars.into_iter().collect();
        let err = PairingTicket::parse(&typo).unwrap_err().to_string();
        assert!(
            err.contains("checksum") || err.contains("cannot be in a code"),
            "{err}"
        );
    }

    #[test]
    fn links_other_than_suzent_pair_with_one_code_are_refused() {
        let code = ticket().code();
        let cases = [
            (format!("ws://192.168.1.20:8080/?code={code}"), "plain ws"),
            (format!("wss://user:pass@host/?code={code}"), "wss://"),
            (
                format!("suzent://user:pass@pair?code={code}"),
                "embedded credentials",
            ),
            (
                format!("suzent://pair?code={code}&code={code}"),
                "repeats the parameter 'code'",
            ),
            (
                format!("suzent://pair?code={code}&host=evil.test"),
                "unknown parameter 'host'",
            ),
            ("suzent://pair".to_string(), "no code"),
            (
                format!("suzent://other?code={code}"),
                "is not a pairing link",
            ),
        ];
        for (link, expected) in cases {
            let err = PairingTicket::parse(&link).unwrap_err().to_string();
            assert!(err.contains(expected), "{link}: {err}");
            // The error never repeats the whole code.
            assert!(!err.contains(&code), "{err}");
        }
    }

    #[test]
    fn both_sides_compute_the_same_words_and_another_joiner_gets_other_words() {
        let t = ticket();
        let joiner = DeviceId::from_public_key(iroh::SecretKey::generate().public());
        let other = DeviceId::from_public_key(iroh::SecretKey::generate().public());
        assert_eq!(t.words(&joiner), t.words(&joiner));
        assert_eq!(t.words(&joiner).len(), WORD_COUNT);
        assert!(t.words(&joiner) != t.words(&other));
        assert!(t.proof(&joiner) != t.proof(&other));
    }
}
