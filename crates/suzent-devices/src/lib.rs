//! Paired devices for Suzent: each install's device key, pairing two installs with a code and
//! matching words, and the authenticated peer protocol between paired installs over iroh (QUIC
//! dialed by public key: direct on the LAN, hole punching and relays across networks).
//!
//! Trust comes from the pinned key alone: a connection is accepted when the key the other side
//! proves in the handshake is the key stored at pairing, never because of an address, a name or
//! a LAN advert. The crate knows nothing of agents or storage: the runtime's devices service
//! implements [`PeerHandler`] and keeps pairings and messages in the store.
//!
//! ```no_run
//! # async fn demo(handler: std::sync::Arc<dyn suzent_devices::PeerHandler>) -> Result<(), suzent_devices::DeviceError> {
//! use suzent_devices::{DeviceIdentity, DeviceNode, KeyStorePreference, NodeConfig};
//! let identity = DeviceIdentity::load_or_create("/tmp/devices".as_ref(), KeyStorePreference::Auto)?;
//! let config = NodeConfig {
//!     name: "laptop".into(),
//!     platform: "linux".into(),
//!     relay: false,
//!     bind: vec!["127.0.0.1:0".parse().unwrap()],
//!     port: 0,
//!     discovery: false,
//! };
//! let node = DeviceNode::bind(&identity, config, handler).await?;
//! let session = node.open_pairing(suzent_devices::CODE_TTL).await?;
//! println!("enter {} on the other device", session.ticket().code());
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod addrs;
mod error;
mod id;
mod identity;
mod node;
mod pairing;
mod ticket;
pub mod wire;
mod words;

pub use addrs::{dialable, known_relay};
pub use error::DeviceError;
pub use id::{DeviceId, SHORT_ID_CHARS};
pub use identity::{DeviceIdentity, KEYCHAIN_SERVICE, KeyStorage, KeyStorePreference};
pub use node::{
    Admission, DIAL_TIMEOUT, DISCOVERY_SERVICE, DeviceNode, Disconnect, NearbyDevice, NodeConfig,
    NodeEvent, PeerAddress, PeerHandler, PeerInfo, REQUEST_TIMEOUT,
};
pub use pairing::{
    CODE_TTL, CONFIRM_TIMEOUT, JoinSession, MAX_WRONG_CODES, PairingSession, PairingState,
    retry_delay,
};
pub use ticket::{CODE_PREFIX, LINK_PREFIX, PairingTicket, SECRET_BYTES, WORD_COUNT, fresh_secret};
