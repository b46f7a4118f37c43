//! Running a client command: connecting, the request, its output and the
//! exit code.

use std::process::ExitCode;

use serde_json::{Map, Value, json};
use snodo::client::{Client, ClientError, CompletionRef, ListenFilter, RequestOptions};

use super::args::{ClientCommand, ListenArgs, Options, parse_pairs};
use super::connect::{connect, connect_with};
use super::failure::{EXIT_TOOL_ERROR, Failure};
use super::output::print_json;
use super::render::Style;
use super::tasks::{call_as_task, list_tasks, show_task};
use super::{auth, render, terminal};
use crate::escape;

async fn run_command(cmd: ClientCommand, style: &Style) -> Result<u8, Failure> {
    match cmd {
        ClientCommand::Login(c) => {
            let oauth = auth::login_oauth(&c)?;
            let plan = auth::Plan::OAuth(oauth.clone());
            let client = connect_with(&c.target, &c.opts, style, plan).await?;
            let outcome = client.discover().await.map(|_| {
                let Some(issuer) = oauth.issuer_for(&c.target) else {
                    outln!("{} did not ask for authorization", c.target);
                    return 0;
                };
                let scopes = oauth.granted_scopes_for(&c.target).join(" ");
                let scopes = if scopes.is_empty() {
                    "none".into()
                } else {
                    scopes
                };
                outln!(
                    "Logged in to {} (issuer {}, scopes: {})",
                    c.target,
                    escape::line(&issuer),
                    escape::line(&scopes)
                );
                0
            });
            finish(&client, &c.opts, outcome).await
        }
        ClientCommand::Logout(c) => auth::logout(&c),
        ClientCommand::Discover(c) => {
            let client = connect(&c.target, &c.opts, style).await?;
            let result = client.discover().await;
            let outcome = result.map(|d| {
                if c.opts.json {
                    print_json(&d);
                } else {
                    render::discover(style, &client, &d);
                }
            });
            finish(&client, &c.opts, outcome.map(|()| 0)).await
        }
        ClientCommand::Tools(c) => {
            let client = connect(&c.target, &c.opts, style).await?;
            let outcome = client.list_tools().await.map(|tools| {
                let tools = values(&tools);
                if c.opts.json {
                    print_json(&json!({"tools": tools}));
                } else {
                    render::tools(style, &tools);
                }
                0
            });
            finish(&client, &c.opts, outcome).await
        }
        ClientCommand::Call(c) => {
            let mut args = match &c.json_args {
                Some(text) => match serde_json::from_str(text) {
                    Ok(Value::Object(map)) => map,
                    Ok(_) => return Err(Failure::usage("--args must be a JSON object")),
                    Err(e) => return Err(Failure::usage(format!("--args is not JSON: {e}"))),
                },
                None => Map::new(),
            };
            args.extend(parse_pairs(&c.args, true)?);
            let client = connect(&c.target, &c.opts, style).await?;
            if c.task {
                let outcome = call_as_task(&client, &c, Value::Object(args), style).await;
                return finish(&client, &c.opts, outcome).await;
            }
            let bar = terminal::ProgressBar::new(style.clone(), c.opts.json);
            let progress = bar.clone();
            let opts = RequestOptions::new().on_progress(move |p| progress.update(&p));
            let result = client
                .call_tool(&c.tool, Value::Object(args))
                .options(opts)
                .await;
            bar.finish();
            let outcome = result.map_err(Failure::from).and_then(|r| {
                let r = r.to_wire();
                if snodo::client::is_input_required(&r) {
                    if c.opts.json {
                        print_json(&r);
                    }
                    return Err(Failure::protocol(
                        "the server asked for input the CLI cannot give (sampling, or a declined form)",
                    ));
                }
                let is_error = r.get("isError").and_then(Value::as_bool) == Some(true);
                if c.opts.json {
                    print_json(&r);
                } else {
                    render::call_result(style, &r);
                }
                Ok(if is_error { EXIT_TOOL_ERROR } else { 0 })
            });
            finish(&client, &c.opts, outcome).await
        }
        ClientCommand::Resources(c) => {
            let client = connect(&c.target, &c.opts, style).await?;
            let caps = client.server_capabilities();
            let outcome: Result<u8, ClientError> = async {
                let resources = values(&client.list_resources().await?);
                let templates = if caps.get("resources").is_some() || client.is_legacy() {
                    values(&client.list_resource_templates().await.unwrap_or_default())
                } else {
                    Vec::new()
                };
                if c.opts.json {
                    print_json(&json!({"resources": resources, "resourceTemplates": templates}));
                } else {
                    render::resources(style, &resources, &templates);
                }
                Ok(0)
            }
            .await;
            finish(&client, &c.opts, outcome).await
        }
        ClientCommand::Skills(c) => {
            let client = connect(&c.target, &c.opts, style).await?;
            let outcome = super::skills::run(&client, &c, style).await;
            finish(&client, &c.opts, outcome).await
        }
        ClientCommand::Read(c) => {
            let client = connect(&c.target, &c.opts, style).await?;
            // What the server sent, shown as sent (escaped), even where it
            // breaks the protocol: the raw request, not the typed read.
            let params = json!({ "uri": c.uri });
            let outcome = client.request("resources/read", params).await.map(|r| {
                if c.opts.json {
                    print_json(&r);
                } else {
                    render::read_result(style, &r);
                }
                0
            });
            finish(&client, &c.opts, outcome).await
        }
        ClientCommand::Prompts(c) => {
            let client = connect(&c.target, &c.opts, style).await?;
            let outcome = client.list_prompts().await.map(|prompts| {
                let prompts = values(&prompts);
                if c.opts.json {
                    print_json(&json!({"prompts": prompts}));
                } else {
                    render::prompts(style, &prompts);
                }
                0
            });
            finish(&client, &c.opts, outcome).await
        }
        ClientCommand::Prompt(c) => {
            let args = parse_pairs(&c.args, false)?;
            let client = connect(&c.target, &c.opts, style).await?;
            // As sent, as for `read`.
            let params = json!({"name": c.name, "arguments": args});
            let outcome = client.request("prompts/get", params).await.map(|r| {
                if c.opts.json {
                    print_json(&r);
                } else {
                    render::prompt_result(style, &r);
                }
                0
            });
            finish(&client, &c.opts, outcome).await
        }
        ClientCommand::Complete(c) => {
            let reference = match c.reference.split_once(':') {
                Some(("prompt", name)) => CompletionRef::Prompt(name.to_string()),
                Some(("resource", uri)) => CompletionRef::Resource(uri.to_string()),
                _ => {
                    return Err(Failure::usage(
                        "the reference must be prompt:NAME or resource:URI",
                    ));
                }
            };
            let (name, prefix) = c
                .argument
                .split_once('=')
                .ok_or_else(|| Failure::usage("the argument must be NAME=PREFIX"))?;
            let context = parse_pairs(&c.context, false)?;
            let client = connect(&c.target, &c.opts, style).await?;
            let context = (!context.is_empty()).then_some(context);
            // What the server sent, shown as sent (escaped), even where it
            // breaks the protocol: the raw request, as for `read`.
            let mut params = json!({
                "ref": reference.to_json(),
                "argument": {"name": name, "value": prefix},
            });
            if let Some(context) = context {
                params["context"] = json!({ "arguments": context });
            }
            let outcome = client
                .request("completion/complete", params)
                .await
                .map(|r| {
                    if c.opts.json {
                        print_json(&r);
                    } else {
                        render::completion(style, &r);
                    }
                    0
                });
            finish(&client, &c.opts, outcome).await
        }
        ClientCommand::Listen(c) => {
            let mut filter = ListenFilter::new();
            filter.tools_list_changed = c.tools;
            filter.prompts_list_changed = c.prompts;
            filter.resources_list_changed = c.resources;
            filter.resource_subscriptions = c.uris.clone();
            if filter == ListenFilter::new() {
                filter = ListenFilter::all_lists();
            }
            let client = connect(&c.target, &c.opts, style).await?;
            let outcome = listen(&client, filter, &c, style).await;
            finish(&client, &c.opts, outcome).await
        }
        ClientCommand::Tasks(c) => {
            let client = connect(&c.target, &c.opts, style).await?;
            let outcome = list_tasks(&client, &c, style).await;
            finish(&client, &c.opts, outcome).await
        }
        ClientCommand::Task(c) => {
            let client = connect(&c.target, &c.opts, style).await?;
            let outcome = show_task(&client, &c, style).await;
            finish(&client, &c.opts, outcome).await
        }
    }
}

async fn listen(
    client: &Client,
    filter: ListenFilter,
    c: &ListenArgs,
    style: &Style,
) -> Result<u8, ClientError> {
    let mut sub = client.listen(filter).await?;
    if !c.opts.json {
        eprintln!(
            "{} listening for {} (Ctrl-C to stop)",
            style.dim("·"),
            render::json_text(sub.acknowledged())
        );
    }
    let mut seen = 0u64;
    loop {
        if c.count.is_some_and(|n| seen >= n) {
            return Ok(0);
        }
        let next = tokio::select! {
            n = sub.next() => n,
            _ = tokio::signal::ctrl_c() => return Ok(0),
        };
        let Some(n) = next else {
            if !c.opts.json {
                eprintln!("{} the server ended the subscription", style.dim("·"));
            }
            return Ok(0);
        };
        seen += 1;
        if c.opts.json {
            outln!(
                "{}",
                render::json_text(&json!({"method": n.method, "params": n.params}))
            );
        } else {
            render::notification(style, &n.method, &n.params);
        }
    }
}

/// Closes the client and turns the outcome into an exit code.
async fn finish(
    client: &Client,
    opts: &Options,
    outcome: Result<u8, impl Into<Failure>>,
) -> Result<u8, Failure> {
    client.close().await;
    match outcome {
        Ok(code) => Ok(code),
        Err(e) => {
            if opts.server_stderr == "capture"
                && let Some(text) = client.stderr()
                && !text.trim().is_empty()
            {
                eprintln!("server stderr:\n{}", escape::block(text.trim_end()));
            }
            Err(e.into())
        }
    }
}

/// Runs a client command and returns the process exit code.
pub(crate) fn main(cmd: ClientCommand, verbose: u8) -> ExitCode {
    let _telemetry =
        crate::telemetry::init("snodo-cli", verbose, crate::telemetry::LogStyle::Client);
    let style = Style::detect();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("snodo: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run_command(cmd, &style)) {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            eprintln!("{} {}", style.error("error:"), escape::line(&f.message));
            ExitCode::from(f.code)
        }
    }
}

/// Listed definitions as JSON, for `--json` and the tables.
fn values<T: serde::Serialize>(items: &[T]) -> Vec<Value> {
    items
        .iter()
        .map(|item| serde_json::to_value(item).unwrap_or_default())
        .collect()
}
