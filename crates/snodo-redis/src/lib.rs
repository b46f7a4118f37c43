//! Redis for the nodes of one snodo service: [`RedisBus`], an
//! [`EventBus`](snodo::server::events::bus::EventBus) on pub/sub, and
//! [`RedisSessions`], a
//! [`SessionDirectory`](snodo::server::legacy::SessionDirectory) of
//! initialize-era sessions with idle expiry.
//!
//! Both reconnect by themselves: a bus that lost its subscription reports
//! [`Delivery::Lost`](snodo::server::events::bus::Delivery::Lost) once it is
//! subscribed again (its hub then resyncs every listener), and payloads
//! queued while the publishing connection was down are sent once it is back.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use snodo::server::events::EventHub;
//! use snodo::server::keyring::Keyring;
//! let keys = Keyring::from_file("keys")?;
//! let bus = snodo_redis::RedisBus::connect("redis://127.0.0.1:6379", "snodo").await?;
//! let hub = EventHub::with_bus(4096, bus, keys)?;
//! # let _ = hub; Ok(()) }
//! ```

mod bus;
mod connection;
mod script;
mod sessions;

pub use bus::{DEFAULT_CHANNEL, RedisBus};
pub use connection::RedisError;
pub use sessions::{DEFAULT_PREFIX, RedisSessions};
