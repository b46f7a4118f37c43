//! `snodo bundle`: an MCP Bundle (`.mcpb`, manifest 0.3) for a stdio server
//! binary, its name, version, description and tools read from the server
//! itself.

mod zip;

use std::path::PathBuf;

use clap::Args;
use serde_json::{Value, json};
use snodo::client::{StderrMode, StdioCommand, Target};

use crate::described::Described;

/// The manifest version written.
const MANIFEST_VERSION: &str = "0.3";

/// `snodo bundle BINARY [-- ARGS...]`.
#[derive(Args)]
pub(crate) struct BundleArgs {
    /// The stdio server binary to bundle.
    binary: PathBuf,
    /// The arguments the server is started with (after --), kept in the
    /// manifest.
    #[arg(last = true, value_name = "ARGS")]
    args: Vec<String>,
    /// The bundle to write (default: NAME-VERSION.mcpb in the current
    /// directory).
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    output: Option<PathBuf>,
    /// The author's name (a manifest names one).
    #[arg(long, value_name = "NAME")]
    author: String,
    /// The bundle's name (default: the server's name).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// The bundle's version (default: the server's version).
    #[arg(long = "version", value_name = "VERSION")]
    version: Option<String>,
    /// What the server does (default: the server's description, else the
    /// first line of its instructions).
    #[arg(long, value_name = "TEXT")]
    description: Option<String>,
    /// The name shown to people (default: the server's title, if any).
    #[arg(long, value_name = "TEXT")]
    display_name: Option<String>,
    /// The license, as an SPDX expression.
    #[arg(long, value_name = "SPDX")]
    license: Option<String>,
    /// Replace the bundle if it exists.
    #[arg(long)]
    force: bool,
}

/// The manifest for `args`, from what the server said of itself.
fn manifest(args: &BundleArgs, server: &Described, entry: &str) -> Result<Value, String> {
    let text = |key: &str| server.text(key);
    let name = args
        .name
        .clone()
        .or_else(|| text("name"))
        .ok_or("the server gives no name: pass --name")?;
    let version = args
        .version
        .clone()
        .or_else(|| text("version"))
        .ok_or("the server gives no version: pass --version")?;
    let description = args
        .description
        .clone()
        .or_else(|| server.description())
        .ok_or("the server gives no description or instructions: pass --description")?;
    let platform = match std::env::consts::OS {
        "macos" => Some("darwin"),
        "windows" => Some("win32"),
        "linux" => Some("linux"),
        _ => None,
    };
    let mut manifest = json!({
        "manifest_version": MANIFEST_VERSION,
        "name": name,
        "version": version,
        "description": description,
        "author": {"name": args.author},
        "server": {
            "type": "binary",
            "entry_point": entry,
            "mcp_config": {
                "command": format!("${{__dirname}}/{entry}"),
                "args": args.args,
            },
        },
    });
    if let Some(platform) = platform {
        manifest["compatibility"] = json!({"platforms": [platform]});
    }
    if let Some(title) = args.display_name.clone().or_else(|| text("title")) {
        manifest["display_name"] = title.into();
    }
    if let Some(long) = server.instructions() {
        manifest["long_description"] = long.into();
    }
    if let Some(license) = &args.license {
        manifest["license"] = license.as_str().into();
    }
    if !server.tools.is_empty() {
        let tools = server
            .tools
            .iter()
            .map(|t| {
                let mut tool = json!({ "name": t.name });
                if let Some(d) = &t.description {
                    tool["description"] = d.as_str().into();
                }
                tool
            })
            .collect();
        manifest["tools"] = Value::Array(tools);
        manifest["tools_generated"] = false.into();
    }
    if server.prompts {
        // A manifest's prompts carry their text, which only a get gives:
        // the host asks the server for them.
        manifest["prompts_generated"] = true.into();
    }
    Ok(manifest)
}

/// Runs `snodo bundle`.
pub(crate) async fn run(args: BundleArgs) -> std::io::Result<()> {
    let fail = |e: String| std::io::Error::other(e);
    let file_name = args
        .binary
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| fail(format!("{}: not a file name", args.binary.display())))?
        .to_owned();
    // One path for the server that runs and the file that is packed (a bare
    // name is not looked up in PATH).
    let path = std::fs::canonicalize(&args.binary)
        .map_err(|e| fail(format!("{}: {e}", args.binary.display())))?;
    let binary = std::fs::read(&path).map_err(|e| fail(format!("{}: {e}", path.display())))?;
    let command = StdioCommand::new(path.as_os_str(), &args.args).stderr(StderrMode::Capture);
    let server = Described::read(Target::Stdio(command), true)
        .await
        .map_err(|e| fail(format!("{}: {e}", args.binary.display())))?;
    let entry = format!("server/{file_name}");
    let manifest = manifest(&args, &server, &entry).map_err(fail)?;
    let mut text = serde_json::to_string_pretty(&manifest).map_err(|e| fail(e.to_string()))?;
    text.push('\n');
    let bytes = zip::archive(&[
        zip::Entry {
            name: "manifest.json".into(),
            mode: 0o100_644,
            bytes: text.into_bytes(),
        },
        zip::Entry {
            name: entry,
            mode: 0o100_755,
            bytes: binary,
        },
    ])
    .map_err(fail)?;
    let output = args.output.clone().unwrap_or_else(|| {
        let name = manifest["name"].as_str().unwrap_or("server");
        let version = manifest["version"].as_str().unwrap_or("0");
        PathBuf::from(format!("{}-{}.mcpb", safe(name), safe(version)))
    });
    write_new(&output, &bytes, args.force)
        .map_err(|e| fail(format!("{}: {e}", output.display())))?;
    println!(
        "{} ({} bytes, sha256 {})",
        output.display(),
        bytes.len(),
        snodo::skills::digest(&bytes).trim_start_matches("sha256:")
    );
    Ok(())
}

/// Writes `bytes` to `path` through a new file beside it, moved into
/// place: an existing `path` is replaced only when `force`.
pub(crate) fn write_new(path: &std::path::Path, bytes: &[u8], force: bool) -> std::io::Result<()> {
    use std::io::Write as _;
    if !force && std::fs::symlink_metadata(path).is_ok() {
        return Err(std::io::Error::other("exists (--force replaces it)"));
    }
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("not a file name"))?;
    let mut partial = name.to_os_string();
    partial.push(format!(".partial-{}", std::process::id()));
    let partial = path.with_file_name(partial);
    let mut file = std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(&partial)?;
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    drop(file);
    let placed = written.and_then(|()| {
        if force {
            std::fs::rename(&partial, path)
        } else {
            // A hard link fails if `path` appeared meanwhile.
            std::fs::hard_link(&partial, path).and_then(|()| std::fs::remove_file(&partial))
        }
    });
    if placed.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    placed
}

/// `text` as a file name part: anything but letters, digits, `.`, `_` and
/// `-` becomes `-`.
fn safe(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_existing_file_is_replaced_only_when_forced_and_nothing_partial_stays() {
        let dir = std::env::temp_dir().join(format!("snodo-write-new-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("x.mcpb");
        write_new(&path, b"one", false).unwrap();
        let e = write_new(&path, b"two", false).unwrap_err();
        assert!(e.to_string().contains("--force"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), b"one");
        write_new(&path, b"three", true).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"three");
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["x.mcpb"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
