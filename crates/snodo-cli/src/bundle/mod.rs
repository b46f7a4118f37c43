//! `snodo bundle`: an MCP Bundle (`.mcpb`, manifest 0.3) for a stdio server
//! binary, its name, version, description and tools read from the server
//! itself.

mod zip;

use std::path::PathBuf;

use clap::Args;
use serde_json::{Map, Value, json};
use snodo::client::{Client, StderrMode, StdioCommand, Target};

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
}

/// What a manifest takes from the running server.
struct Described {
    info: Map<String, Value>,
    instructions: Option<String>,
    tools: Vec<Value>,
    prompts: bool,
}

async fn describe(args: &BundleArgs) -> Result<Described, String> {
    let command =
        StdioCommand::new(args.binary.as_os_str(), &args.args).stderr(StderrMode::Capture);
    let client = Client::connect(Target::Stdio(command))
        .await
        .map_err(|e| format!("{}: {e}", args.binary.display()))?;
    let described = async {
        let info = match client.server_info() {
            Some(Value::Object(info)) => info,
            _ => Map::new(),
        };
        let caps = client.server_capabilities();
        let tools = if caps.get("tools").is_some() {
            client
                .list_tools()
                .await?
                .into_iter()
                .map(|t| {
                    let mut tool = json!({ "name": t.name });
                    if let Some(d) = t.description {
                        tool["description"] = d.into();
                    }
                    tool
                })
                .collect()
        } else {
            Vec::new()
        };
        let prompts = caps.get("prompts").is_some() && !client.list_prompts().await?.is_empty();
        Ok::<_, snodo::client::ClientError>(Described {
            info,
            instructions: client.instructions(),
            tools,
            prompts,
        })
    }
    .await;
    client.close().await;
    described.map_err(|e| format!("{}: {e}", args.binary.display()))
}

/// The manifest for `args`, from what the server said of itself.
fn manifest(args: &BundleArgs, server: &Described, entry: &str) -> Result<Value, String> {
    let text = |key: &str| {
        server
            .info
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
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
    let first_line = server
        .instructions
        .as_deref()
        .and_then(|i| i.lines().find(|l| !l.trim().is_empty()))
        .map(|l| l.trim().to_owned());
    let description = args
        .description
        .clone()
        .or_else(|| text("description"))
        .or(first_line)
        .ok_or("the server gives no description or instructions: pass --description")?;
    let platform = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
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
        "compatibility": {"platforms": [platform]},
    });
    if let Some(title) = args.display_name.clone().or_else(|| text("title")) {
        manifest["display_name"] = title.into();
    }
    if let Some(long) = server
        .instructions
        .as_deref()
        .filter(|i| !i.trim().is_empty())
    {
        manifest["long_description"] = long.into();
    }
    if let Some(license) = &args.license {
        manifest["license"] = license.as_str().into();
    }
    if !server.tools.is_empty() {
        manifest["tools"] = Value::Array(server.tools.clone());
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
    let binary =
        std::fs::read(&args.binary).map_err(|e| fail(format!("{}: {e}", args.binary.display())))?;
    let server = describe(&args).await.map_err(fail)?;
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
    std::fs::write(&output, &bytes).map_err(|e| fail(format!("{}: {e}", output.display())))?;
    println!(
        "{} ({} bytes, sha256 {})",
        output.display(),
        bytes.len(),
        snodo::skills::digest(&bytes).trim_start_matches("sha256:")
    );
    Ok(())
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
