//! Which destinations another device may make this one contact. A pairing code, a paired
//! device's hello and the stored addresses all come from the other side, so none of them may
//! point this device at a cloud metadata service, a broadcast or multicast group, or (unless
//! this endpoint itself listens on loopback) a service on this machine; a relay must be one of
//! the relays this endpoint uses. QUIC has no redirects to follow.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};

/// The AWS IPv6 metadata address (`fd00:ec2::254`).
const EC2_METADATA_V6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254);

/// Whether a direct address from another device may be dialed. `loopback_ok` when this
/// endpoint listens on loopback itself (both installs on one machine).
pub fn dialable(addr: &SocketAddr, loopback_ok: bool) -> bool {
    if addr.port() == 0 {
        return false;
    }
    match addr.ip() {
        IpAddr::V4(ip) => {
            let o = ip.octets();
            !(ip.is_unspecified()
                || ip.is_broadcast()
                || ip.is_multicast()
                // 169.254.0.0/16: link-local, and the cloud metadata service (169.254.169.254).
                || (o[0] == 169 && o[1] == 254)
                // 0.0.0.0/8 and 240.0.0.0/4 are not destinations.
                || o[0] == 0
                || o[0] >= 240
                || (ip.is_loopback() && !loopback_ok))
        }
        IpAddr::V6(ip) => {
            if let Some(v4) = ip.to_ipv4_mapped() {
                return dialable(&SocketAddr::new(IpAddr::V4(v4), addr.port()), loopback_ok);
            }
            !(ip.is_unspecified()
                || ip.is_multicast()
                || ip == EC2_METADATA_V6
                || (ip.is_loopback() && !loopback_ok))
        }
    }
}

/// The relay URL another device named, if it is one of the relays this endpoint uses (iroh's
/// public relays); any other host is refused.
pub fn known_relay(url: &str) -> Option<iroh::RelayUrl> {
    let url: iroh::RelayUrl = url.parse().ok()?;
    iroh::endpoint::default_relay_mode()
        .relay_map()
        .contains(&url)
        .then_some(url)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn addresses_from_another_device_cannot_point_at_metadata_broadcast_or_this_machine() {
        let cases = [
            ("169.254.169.254:80", false),
            ("169.254.1.7:4433", false),
            ("0.0.0.0:4433", false),
            ("255.255.255.255:4433", false),
            ("224.0.0.251:5353", false),
            ("[fd00:ec2::254]:80", false),
            ("[::ffff:169.254.169.254]:80", false),
            ("127.0.0.1:8080", false),
            ("[::1]:8080", false),
            ("192.168.1.20:0", false),
            ("192.168.1.20:4433", true),
            ("10.0.0.7:4433", true),
            ("[2001:db8::1]:4433", true),
            ("203.0.113.9:4433", true),
        ];
        let got: Vec<(&str, bool)> = cases
            .iter()
            .map(|(a, _)| (*a, dialable(&a.parse().unwrap(), false)))
            .collect();
        assert_eq!(got, cases.to_vec());
        // Both installs on one machine: loopback is how they meet.
        assert!(dialable(&"127.0.0.1:8080".parse().unwrap(), true));
        assert!(!dialable(&"169.254.169.254:80".parse().unwrap(), true));
    }

    #[test]
    fn only_the_relays_this_endpoint_uses_are_accepted_from_another_device() {
        let default = iroh::endpoint::default_relay_mode()
            .relay_map()
            .urls::<Vec<_>>();
        assert!(known_relay(&default[0].to_string()).is_some());
        for bad in [
            "https://169.254.169.254/",
            "https://evil.test/",
            "http://127.0.0.1:8080/",
            "not a url",
        ] {
            assert_eq!(known_relay(bad), None, "{bad}");
        }
    }
}
