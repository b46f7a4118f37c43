//! The harness behind `snodo-bench`: processes, load generators, report.

pub(crate) mod bridge;
pub(crate) mod chart;
pub(crate) mod docs;
pub(crate) mod fanout;
pub(crate) mod figures;
pub(crate) mod gateway;
pub(crate) mod histogram;
pub(crate) mod http_load;
pub(crate) mod issuer;
pub(crate) mod open_load;
pub(crate) mod output;
pub(crate) mod procs;
pub(crate) mod provenance;
pub(crate) mod report;
pub(crate) mod stdio_load;
pub(crate) mod task_load;
pub(crate) mod telemetry;
pub(crate) mod wire;
