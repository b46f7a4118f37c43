//! The modes that run instead of the main benchmark: `--bridge`,
//! `--telemetry` and `--fanout`.

mod bridge;
mod fanout;
mod telemetry;

pub(crate) use bridge::bridge_main;
pub(crate) use fanout::fanout_main;
pub(crate) use telemetry::telemetry_main;
