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

use crate::harness::procs::{self, Launcher};
use crate::machine::{HARNESS_CPU, SERVER_CPU};
use crate::options::Options;

/// The launcher of a mode's servers and whether they are pinned: with two
/// CPUs or more and `taskset`, the harness pins itself to its CPU now and
/// the servers go to theirs.
fn pinned_launcher(options: &Options, dir: std::path::PathBuf) -> Result<(Launcher, bool), String> {
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    let pinned = options.pin && cpus >= 2 && procs::have_taskset();
    if pinned {
        procs::pin_self(HARNESS_CPU)?;
    }
    let launcher = Launcher {
        dir,
        server_cpu: pinned.then(|| SERVER_CPU.to_string()),
        show_stderr: options.show_stderr,
    };
    Ok((launcher, pinned))
}
