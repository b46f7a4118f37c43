//! Medians over rounds, the markdown table (absolute figures and snodo's
//! ratios to each peer), the goal check, and the JSON document.

mod figures;
mod goals;
mod notes;
mod summary;
mod table;
mod workloads;

pub(crate) use goals::{goals, goals_markdown};
pub(crate) use notes::notes;
pub(crate) use summary::{Sample, Samples, document, summarize};
pub(crate) use table::table;
pub(crate) use workloads::{WORKLOADS, not_applicable};
