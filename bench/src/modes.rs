//! The modes that run instead of the main benchmark: `--bridge`,
//! `--gateway`, `--telemetry` and `--fanout`.

mod bridge;
mod fanout;
mod gateway;
mod telemetry;

pub(crate) use bridge::bridge_main;
pub(crate) use fanout::fanout_main;
pub(crate) use gateway::gateway_main;
pub(crate) use telemetry::telemetry_main;
