//! `snodo registry init`: a `server.json` for the MCP registry, from what a
//! server says of itself (its discover answer) and the packages named on the
//! command line.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde_json::{Value, json};
use snodo::client::{StderrMode, StdioCommand, Target};

use crate::described::Described;

/// The registry schema `server.json` follows.
pub(crate) const SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

/// `snodo registry`.
#[derive(Args)]
pub(crate) struct RegistryArgs {
    #[command(subcommand)]
    command: RegistryCommand,
}

#[derive(Subcommand)]
enum RegistryCommand {
    /// Write server.json (the MCP registry's schema 2025-12-11) from the
    /// server's own discover answer: options first, then --stdio CMD... or
    /// --http URL.
    Init(InitArgs),
}

#[derive(Args)]
#[command(group(
    clap::ArgGroup::new("transport").required(true).multiple(false).args(["stdio", "http"])
))]
struct InitArgs {
    /// The server started over stdio: its program and arguments (the rest of
    /// the command line).
    #[arg(long, num_args = 1.., allow_hyphen_values = true, value_name = "CMD")]
    stdio: Option<Vec<String>>,
    /// The server at a Streamable HTTP URL: a remote of the entry.
    #[arg(long, value_name = "URL")]
    http: Option<String>,
    /// Where to write (default: server.json in the current directory).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "PATH",
        default_value = "server.json"
    )]
    output: PathBuf,
    /// Replace the file if it exists.
    #[arg(long)]
    force: bool,
    /// The entry's name, reverse-DNS (io.github.USER/NAME) (default: the
    /// server's name, when it is one).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// The version (default: the server's).
    #[arg(long = "version", value_name = "VERSION")]
    version: Option<String>,
    /// What the server does, at most 100 characters (default: the server's
    /// description, else the first line of its instructions).
    #[arg(long, value_name = "TEXT")]
    description: Option<String>,
    /// The name shown to people (default: the server's title).
    #[arg(long, value_name = "TEXT")]
    title: Option<String>,
    /// The server's website (default: the server's websiteUrl).
    #[arg(long, value_name = "URL")]
    website: Option<String>,
    /// The source repository's URL (its host names the source: github,
    /// gitlab, ...).
    #[arg(long, value_name = "URL")]
    repository: Option<String>,
    /// A package that installs the server: TYPE:IDENTIFIER[@VERSION]
    /// (npm:@acme/weather@1.2.0, pypi:weather-mcp@1.2.0, oci:ghcr.io/acme/weather:1.2.0,
    /// mcpb:https://.../weather.mcpb@1.2.0 with --sha256). Repeatable.
    #[arg(long = "package", value_name = "TYPE:ID[@VERSION]")]
    packages: Vec<String>,
    /// The SHA-256 of the mcpb package's file (snodo bundle prints it).
    #[arg(long, value_name = "HEX")]
    sha256: Option<String>,
    /// An argument the packages' program is started with (repeatable, in
    /// order; an mcpb package's manifest carries its own).
    #[arg(long = "package-arg", value_name = "ARG", allow_hyphen_values = true)]
    package_args: Vec<String>,
}

/// Runs `snodo registry`.
pub(crate) async fn run(args: RegistryArgs) -> std::io::Result<()> {
    let RegistryCommand::Init(args) = args.command;
    let fail = std::io::Error::other;
    if args.sha256.is_some() && !args.packages.iter().any(|p| p.starts_with("mcpb:")) {
        return Err(fail(
            "--sha256 is the digest of an mcpb package: give one".to_string(),
        ));
    }
    let packages = args
        .packages
        .iter()
        .map(|p| package(p, &args))
        .collect::<Result<Vec<_>, _>>()
        .map_err(fail)?;
    let described = Described::read(target(&args).map_err(fail)?, false)
        .await
        .map_err(|e| fail(e.to_string()))?;
    let entry = entry(&args, &described, packages).map_err(fail)?;
    let mut text = serde_json::to_string_pretty(&entry).map_err(std::io::Error::other)?;
    text.push('\n');
    crate::bundle::write_new(&args.output, text.as_bytes(), args.force)
        .map_err(|e| fail(format!("{}: {e}", args.output.display())))?;
    println!("{}", args.output.display());
    Ok(())
}

/// The server `args` name.
fn target(args: &InitArgs) -> Result<Target, String> {
    match (&args.stdio, &args.http) {
        (Some(cmd), _) => {
            let (program, rest) = cmd.split_first().ok_or("--stdio needs a command")?;
            Ok(Target::Stdio(
                StdioCommand::new(program, rest).stderr(StderrMode::Capture),
            ))
        }
        (None, Some(url)) => Ok(Target::from(url.as_str())),
        (None, None) => Err("give --stdio CMD... or --http URL".into()),
    }
}

/// One `--package TYPE:IDENTIFIER[@VERSION]`.
fn package(spec: &str, args: &InitArgs) -> Result<Value, String> {
    let (kind, rest) = spec
        .split_once(':')
        .ok_or_else(|| format!("--package {spec}: expected TYPE:IDENTIFIER[@VERSION]"))?;
    // A scoped npm name starts with `@`: the version is after a later one,
    // and has no `/` or `:` (a URL's path or an image digest does). An OCI
    // reference keeps its tag or digest.
    let (identifier, version) = match rest.rfind('@') {
        Some(at) if at > 0 && kind != "oci" && !rest[at + 1..].contains(['/', ':']) => {
            (&rest[..at], Some(&rest[at + 1..]))
        }
        _ => (rest, None),
    };
    if kind.is_empty() || identifier.is_empty() || version.is_some_and(str::is_empty) {
        return Err(format!(
            "--package {spec}: expected TYPE:IDENTIFIER[@VERSION]"
        ));
    }
    let mut package = json!({
        "registryType": kind,
        "identifier": identifier,
        "transport": {"type": "stdio"},
    });
    if let Some(version) = version {
        package["version"] = version.into();
    }
    if kind == "mcpb" {
        let sha = args
            .sha256
            .as_deref()
            .ok_or_else(|| format!("--package {spec}: an mcpb package needs --sha256 HEX"))?;
        if sha.len() != 64 || !sha.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return Err(format!(
                "--sha256 {sha}: expected 64 lowercase hexadecimal digits"
            ));
        }
        package["fileSha256"] = sha.into();
    }
    if kind != "mcpb" && !args.package_args.is_empty() {
        let arguments: Vec<Value> = args
            .package_args
            .iter()
            .map(|a| json!({"type": "positional", "value": a}))
            .collect();
        package["packageArguments"] = Value::Array(arguments);
    }
    Ok(package)
}

/// Whether `name` is a registry name: `namespace/name`, reverse-DNS.
fn is_registry_name(name: &str) -> bool {
    let Some((ns, rest)) = name.split_once('/') else {
        return false;
    };
    (3..=200).contains(&name.len())
        && !ns.is_empty()
        && ns
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
        && !rest.is_empty()
        && rest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// The `server.json` entry.
fn entry(args: &InitArgs, server: &Described, packages: Vec<Value>) -> Result<Value, String> {
    let text = |key: &str| server.text(key);
    let name = args
        .name
        .clone()
        .or_else(|| text("name"))
        .unwrap_or_default();
    if !is_registry_name(&name) {
        return Err(format!(
            "the name {name:?} is not a registry name: pass --name NAMESPACE/NAME (reverse-DNS, e.g. io.github.USER/SERVER)"
        ));
    }
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
    if description.chars().count() > 100 {
        return Err(format!(
            "the description is {} characters, over the registry's 100: pass --description",
            description.chars().count()
        ));
    }
    let mut entry = json!({
        "$schema": SCHEMA,
        "name": name,
        "description": description,
        "version": version,
    });
    if let Some(title) = args
        .title
        .clone()
        .or_else(|| text("title"))
        .filter(|t| !t.is_empty())
    {
        entry["title"] = title.chars().take(100).collect::<String>().into();
    }
    if let Some(site) = args
        .website
        .clone()
        .or_else(|| text("websiteUrl"))
        .filter(|s| s.starts_with("https://") || s.starts_with("http://"))
    {
        entry["websiteUrl"] = site.into();
    }
    if let Some(url) = &args.repository {
        if !url.contains("://") {
            return Err(format!("--repository {url}: expected a URL"));
        }
        let host = url
            .split("://")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .unwrap_or_default();
        let source = host
            .trim_start_matches("www.")
            .split('.')
            .next()
            .unwrap_or(host);
        entry["repository"] = json!({"url": url, "source": source});
    }
    if !packages.is_empty() {
        entry["packages"] = Value::Array(packages);
    }
    if let Some(url) = &args.http {
        entry["remotes"] = json!([{"type": "streamable-http", "url": url}]);
    }
    Ok(entry)
}
