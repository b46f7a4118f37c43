//! The servers of a run: those selected, their order in a round, and how
//! their answers are judged.

use crate::harness;
use crate::harness::procs::{SERVERS, Spec};
use crate::harness::wire::{Expect, Work};
use crate::options::Options;

pub(crate) fn selected(options: &Options) -> Vec<Spec> {
    SERVERS
        .into_iter()
        .filter(|s| options.servers.contains(&s.name))
        .collect()
}

pub(crate) fn expect_for(spec: &Spec) -> Expect {
    expect_of(spec, Work::Echo)
}

/// How `spec`'s answers to `work` are judged (the ceiling's are fixed).
pub(crate) fn expect_of(spec: &Spec, work: Work) -> Expect {
    match (spec.name, work) {
        ("ceiling", _) => Expect::Ceiling,
        (_, Work::Add) => Expect::Add,
        (_, Work::List) => Expect::List,
        (_, Work::Echo) => Expect::Echo,
    }
}

/// The order servers run in this round: random, so that none always runs
/// first (or right after a given peer).
pub(crate) fn order(n: usize, round: usize) -> Vec<usize> {
    harness::telemetry::shuffled(n, round)
}
