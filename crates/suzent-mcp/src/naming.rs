//! Tool names sent to the model: `mcp__{server}__{tool}`, sanitized to `^[a-zA-Z0-9_-]{1,64}$`
//! (public case mcp 2). A name that had to change (characters replaced, or too long) or that
//! would collide with another tool's gets an 8-hex-digit hash of the original server and tool
//! names, so names are deterministic and distinct; calls still use the original tool name.

use std::collections::HashMap;

/// Longest name the providers accept.
pub const MAX_NAME_LEN: usize = 64;

/// The prefix of every MCP tool name.
pub const PREFIX: &str = "mcp__";

/// 64-bit FNV-1a (stable across builds and platforms, unlike `DefaultHasher`).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn sanitize(raw: &str) -> String {
    raw.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn pair_hash(server: &str, tool: &str, salt: u32) -> u64 {
    let mut bytes = Vec::with_capacity(server.len() + tool.len() + 8);
    bytes.extend_from_slice(server.as_bytes());
    bytes.push(0xff);
    bytes.extend_from_slice(tool.as_bytes());
    bytes.extend_from_slice(&salt.to_le_bytes());
    fnv1a(&bytes)
}

fn with_hash(clean: &str, hash: u64) -> String {
    let suffix = format!("_{:08x}", hash & 0xffff_ffff);
    let keep = MAX_NAME_LEN - suffix.len();
    let mut base = clean.to_string();
    base.truncate(keep); // ASCII after sanitizing: any byte index is a char boundary
    base + &suffix
}

/// Whether `name` fits `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The model-facing name of every `(server, tool)` pair, in the same order. Distinct pairs get
/// distinct names; the same set of pairs always gets the same names.
pub fn qualify_all(pairs: &[(&str, &str)]) -> Vec<String> {
    let mut names: Vec<String> = pairs
        .iter()
        .map(|(server, tool)| {
            let raw = format!("{PREFIX}{server}__{tool}");
            let clean = sanitize(&raw);
            if clean == raw && clean.len() <= MAX_NAME_LEN {
                clean
            } else {
                with_hash(&clean, pair_hash(server, tool, 0))
            }
        })
        .collect();
    // Collisions (e.g. server `a__b` tool `c` and server `a` tool `b__c`): every member of a
    // colliding group gets a hash, salted again in the (unlikely) case hashes collide too.
    for salt in 0..8u32 {
        let mut count: HashMap<&str, usize> = HashMap::new();
        for n in &names {
            *count.entry(n.as_str()).or_default() += 1;
        }
        let dup: Vec<usize> = names
            .iter()
            .enumerate()
            .filter(|(_, n)| count[n.as_str()] > 1)
            .map(|(i, _)| i)
            .collect();
        if dup.is_empty() {
            break;
        }
        for i in dup {
            let (server, tool) = pairs[i];
            let clean = sanitize(&format!("{PREFIX}{server}__{tool}"));
            names[i] = with_hash(&clean, pair_hash(server, tool, salt + 1));
        }
    }
    names
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn plain_names_are_kept_readable() {
        assert_eq!(qualify_all(&[("fs", "read_file")]), ["mcp__fs__read_file"]);
    }

    #[test]
    fn long_and_dotted_names_fit_the_provider_pattern_and_are_deterministic() {
        let pairs = [
            (
                "awslabs_billing-cost-management-mcp-server",
                "get_cost_and_usage_comparisons_with_forecast_by_dimension",
            ),
            ("my.server", "send email"),
        ];
        let a = qualify_all(&pairs);
        let b = qualify_all(&pairs);
        assert_eq!(a, b);
        for n in &a {
            assert!(is_valid_name(n), "{n}");
        }
        assert!(a[0].starts_with("mcp__awslabs_billing-cost-management-mcp-server__"));
        assert!(a[1].starts_with("mcp__my_server__send_email_"));
    }

    #[test]
    fn names_that_would_collide_get_distinct_hashed_names() {
        let names = qualify_all(&[("a__b", "c"), ("a", "b__c"), ("x.y", "t"), ("x_y", "t")]);
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), 4, "{names:?}");
        assert!(names.iter().all(|n| is_valid_name(n)));
    }

    #[test]
    fn two_servers_exposing_send_email_get_two_tools() {
        let names = qualify_all(&[("mail_a", "send_email"), ("mail_b", "send_email")]);
        assert_eq!(
            names,
            ["mcp__mail_a__send_email", "mcp__mail_b__send_email"]
        );
    }
}
