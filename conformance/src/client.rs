//! `snodo-conformance client <url>`: the client the official conformance
//! suite's client leg drives, written with snodo's public client API.
//!
//! The runner starts a mock server, appends its URL as the last argument and
//! sets `MCP_CONFORMANCE_SCENARIO`, `MCP_CONFORMANCE_PROTOCOL_VERSION` and (for
//! some scenarios) `MCP_CONFORMANCE_CONTEXT`. The client connects (pinning the
//! initialize-era revision the runner names, negotiating otherwise), then
//! exercises what the server advertises: it lists the tools and calls each
//! (with the arguments the context gives, or sample arguments built from the
//! input schema), reads every resource and gets every prompt. Elicitations
//! are accepted with the schema's defaults, sampling answers with a canned
//! message, and roots list one directory.

use std::process::ExitCode;

use serde_json::{Map, Value, json};
use snodo::client::oauth::{
    Assertion, ClientCredentials, DpopKey, EnterpriseIdp, OAuth, SigningKey,
};
use snodo::client::{Client, ClientError, ElicitRequest, ProtocolErrorKind, Root};
use snodo::handler::{ElicitAction, ElicitResponse};

/// A sample value for a schema property.
fn sample(schema: &Value, counter: &mut i64) -> Value {
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    if let Some(default) = schema.get("default") {
        return default.clone();
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("number" | "integer") => {
            *counter += 1;
            json!(*counter)
        }
        Some("boolean") => json!(true),
        Some("array") => json!([]),
        Some("object") => json!({}),
        Some("null") => Value::Null,
        _ => json!("test"),
    }
}

/// Sample values for the required properties of an object schema.
fn sample_arguments(schema: &Value) -> Map<String, Value> {
    let mut counter = 1;
    let mut out = Map::new();
    let props = schema.get("properties").and_then(Value::as_object);
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        let prop = props
            .and_then(|p| p.get(name))
            .cloned()
            .unwrap_or(Value::Null);
        out.insert(name.to_string(), sample(&prop, &mut counter));
    }
    out
}

/// Accepts a form with every default, and sample values for required
/// properties that have none.
fn accept(req: &ElicitRequest) -> ElicitResponse {
    let mut content = req.defaults();
    if let snodo::client::ElicitMode::Form { schema } = &req.mode {
        for (k, v) in sample_arguments(schema) {
            content.entry(k).or_insert(v);
        }
    }
    ElicitResponse {
        action: ElicitAction::Accept,
        content,
    }
}

async fn exercise(client: &Client, context: &Value) -> Vec<String> {
    let mut failures = Vec::new();
    let caps = client.server_capabilities();
    let mut note = |what: String, result: Result<(), ClientError>| match result {
        Ok(_) => eprintln!("ok: {what}"),
        Err(e) => {
            eprintln!("failed: {what}: {e}");
            failures.push(format!("{what}: {e}"));
        }
    };
    if caps.get("tools").is_some() {
        match client.list_tools().await {
            Ok(tools) => {
                let calls: Vec<(String, Value)> =
                    match context.get("toolCalls").and_then(Value::as_array) {
                        Some(list) => list
                            .iter()
                            .filter_map(|c| {
                                let name = c.get("name")?.as_str()?.to_string();
                                Some((
                                    name,
                                    c.get("arguments").cloned().unwrap_or_else(|| json!({})),
                                ))
                            })
                            .collect(),
                        None => tools
                            .iter()
                            .map(|t| {
                                let args = sample_arguments(&t.input_schema);
                                (t.name.clone(), Value::Object(args))
                            })
                            .collect(),
                    };
                for (name, args) in calls {
                    let result = client.call_tool(&name, args).await;
                    note(format!("call {name}"), result.map(drop));
                }
            }
            Err(e) => note("list tools".into(), Err(e)),
        }
    }
    if caps.get("resources").is_some() {
        match client.list_resources().await {
            Ok(resources) => {
                for uri in resources.iter().map(|r| r.uri.as_str()) {
                    let result = client.read_resource(uri).await;
                    note(format!("read {uri}"), result.map(drop));
                }
            }
            Err(e) => note("list resources".into(), Err(e)),
        }
    }
    if caps.get("prompts").is_some() {
        match client.list_prompts().await {
            Ok(prompts) => {
                for prompt in &prompts {
                    let name = prompt.name.as_str();
                    let args: Map<String, Value> = prompt
                        .arguments
                        .iter()
                        .filter(|arg| arg.required)
                        .map(|arg| (arg.name.clone(), json!("test")))
                        .collect();
                    let result = client.get_prompt(name, Value::Object(args)).await;
                    note(format!("get prompt {name}"), result.map(drop));
                }
            }
            Err(e) => note("list prompts".into(), Err(e)),
        }
    }
    failures
}

/// The harness's Client ID Metadata Document URL.
const CIMD_URL: &str = "https://conformance-test.local/client-metadata.json";

/// OAuth for the `auth/*` scenarios: headless (the mock authorization
/// server approves at once and the redirect is read from `Location`), the
/// harness's CIMD URL, a DPoP key (used only where an authorization server
/// lists ES256), and what the scenario's context adds (a registration made
/// beforehand, client credentials with a secret or a private key).
fn oauth_for(context: &Value) -> Result<OAuth, String> {
    let text = |key: &str| context.get(key).and_then(Value::as_str);
    let key = DpopKey::generate().map_err(|e| e.to_string())?;
    let mut oauth = OAuth::builder()
        .client_name("snodo-conformance")
        .redirect_uri("http://localhost:3000/callback")
        .client_metadata_url(CIMD_URL)
        .dpop(key);
    let scenario = text("name").unwrap_or_default();
    match (text("client_id"), scenario) {
        (Some(id), "auth/pre-registration") => {
            let issuer = text("issuer").unwrap_or_default();
            oauth = oauth.pre_registered(issuer, id, text("client_secret"));
        }
        (Some(id), _) if text("valid_jwt").is_some() => {
            let jwt = text("valid_jwt").unwrap_or_default();
            oauth = oauth.client_credentials(ClientCredentials::WorkloadJwt {
                client_id: id.to_string(),
                assertion: Assertion::text(jwt),
            });
        }
        (Some(id), _) if text("idp_id_token").is_some() => {
            let idp = EnterpriseIdp::new(
                text("idp_token_endpoint").unwrap_or_default(),
                text("idp_client_id").unwrap_or_default(),
                Assertion::text(text("idp_id_token").unwrap_or_default()),
            );
            oauth = oauth.client_credentials(ClientCredentials::Enterprise {
                client_id: id.to_string(),
                client_secret: text("client_secret").unwrap_or_default().to_string(),
                idp,
            });
        }
        (Some(id), _) if text("private_key_pem").is_some() => {
            let pem = text("private_key_pem").unwrap_or_default();
            let alg = text("signing_algorithm").unwrap_or("ES256");
            let key =
                SigningKey::from_pem(pem, alg).map_err(|e| format!("invalid argument: {e}"))?;
            oauth = oauth.client_credentials(ClientCredentials::PrivateKeyJwt {
                client_id: id.to_string(),
                key,
            });
        }
        (Some(id), _) if text("client_secret").is_some() => {
            let secret = text("client_secret").unwrap_or_default();
            oauth = oauth.client_credentials(ClientCredentials::secret(id, secret));
        }
        _ => {}
    }
    Ok(oauth.build())
}

async fn run(url: &str) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_default();
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    eprintln!("snodo-conformance client: scenario {scenario:?}, version {version:?}, url {url}");
    let mut builder = Client::builder()
        .client_info("snodo-conformance", env!("CARGO_PKG_VERSION"))
        .on_elicit_form(|req| async move { Ok(accept(&req)) })
        .on_sampling(|_params| async move {
            Ok(json!({"role": "assistant", "content": {"type": "text", "text": "A sampled answer."},
                "model": "snodo-conformance", "stopReason": "endTurn"}))
        })
        .roots(vec![Root::new("file:///tmp/snodo-conformance", Some("workspace"))]);
    if snodo::client::LEGACY_VERSIONS.contains(&version.as_str()) {
        builder = builder.protocol_version(&version);
    }
    if scenario.starts_with("auth/") {
        builder = builder.oauth(oauth_for(&context)?);
    }
    let client = builder.connect(url).await?;
    eprintln!(
        "connected: protocol {}, server {}",
        client.protocol_version(),
        client.server_info().unwrap_or(Value::Null)
    );
    let failures = match scenario.as_str() {
        "json-schema-ref-no-deref" => match client.list_tools().await {
            Ok(_) => Vec::new(),
            Err(e) => vec![format!("list tools: {e}")],
        },
        "json-schema-2020-12-preservation" => echo_schemas(&client).await,
        _ if client.serves_skills() => {
            // A host lists skills and loads one only when it is needed: at
            // `no-prefetch` nothing is needed; elsewhere every skill is
            // loaded once, as if the model had asked for it.
            let load = scenario != "sep-2640-client-no-prefetch";
            let mut failures = skills(&client, load).await;
            failures.extend(exercise(&client, &context).await);
            failures
        }
        _ => exercise(&client, &context).await,
    };
    client.close().await;
    Ok(failures)
}

/// Lists the skills and, with `load`, loads each and reads its other files.
/// A skill whose files are not what its entry says is refused (and none of
/// its files is read after that): that is the host's duty, not a failure.
async fn skills(client: &Client, load: bool) -> Vec<String> {
    let entries = match client.list_skills().await {
        Ok(entries) => entries,
        Err(e) => return vec![format!("list skills: {e}")],
    };
    eprintln!("skills listed: {}", entries.len());
    let mut failures = Vec::new();
    for entry in entries.into_iter().filter(|_| load) {
        let uri = entry.uri.clone();
        let files: Vec<String> = match &entry.resources {
            snodo::skills::SkillFiles::Listed(files) => files
                .iter()
                .map(|f| f.uri.clone())
                .filter(|u| *u != uri)
                .collect(),
            _ => Vec::new(),
        };
        let skill = match client.load_skill(entry).await {
            Ok(skill) => skill,
            Err(e) if e.protocol_kind() == Some(ProtocolErrorKind::SkillVerification) => {
                eprintln!("refused skill {uri}: {e}");
                continue;
            }
            Err(e) => {
                failures.push(format!("load skill {uri}: {e}"));
                continue;
            }
        };
        eprintln!("loaded skill {uri}");
        for file in files {
            match skill.read(client, &file).await {
                Ok(bytes) => eprintln!("read {file}: {} bytes, verified", bytes.len()),
                Err(e) if e.protocol_kind() == Some(ProtocolErrorKind::SkillVerification) => {
                    eprintln!("refused {file}: {e}");
                    break;
                }
                Err(e) => failures.push(format!("read {file}: {e}")),
            }
        }
    }
    failures
}

/// Lists the tools and passes each input schema the client kept, as it
/// kept it, back through the echo tool the scenario serves: what the
/// server receives is what a program using the client would see.
async fn echo_schemas(client: &Client) -> Vec<String> {
    const ECHO: &str = "json_schema_echo";
    let tools = match client.list_tools().await {
        Ok(tools) => tools,
        Err(e) => return vec![format!("list tools: {e}")],
    };
    let mut failures = Vec::new();
    for tool in tools.iter().filter(|t| t.name != ECHO) {
        let args = json!({"schema": tool.input_schema});
        if let Err(e) = client.call_tool(ECHO, args).await {
            failures.push(format!("echo the schema of {}: {e}", tool.name));
        }
    }
    failures
}

/// Runs the client leg against `url`.
pub(crate) fn main(url: &str) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("snodo-conformance: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(url)) {
        Ok(failures) if failures.is_empty() => ExitCode::SUCCESS,
        Ok(failures) => {
            eprintln!(
                "snodo-conformance client: {} operation(s) failed",
                failures.len()
            );
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("snodo-conformance client: {e}");
            ExitCode::FAILURE
        }
    }
}
