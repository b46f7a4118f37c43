//! The stdio load generator: newline-delimited `tools/call echo` requests on a
//! server's stdin with a fixed number in flight (closed loop: each response
//! lets one more request go), responses paired by id and checked.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufWriter};

use super::http_load::Outcome;
use super::procs::StdioServer;
use super::wire::{self, Expect, Verdict, Work};

/// Keeps `in_flight` echo calls outstanding for `warmup` + `measure`; counts
/// the responses that arrive during `measure`.
pub(crate) async fn run(
    server: &mut StdioServer,
    in_flight: usize,
    warmup: Duration,
    measure: Duration,
) -> Outcome {
    let mut out = Outcome {
        window: measure,
        ..Outcome::default()
    };
    let limit = warmup + measure + Duration::from_secs(15);
    match tokio::time::timeout(limit, drive(server, in_flight, warmup, measure, &mut out)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            out.errors += 1;
            out.first_error.get_or_insert(e);
        }
        Err(_) => {
            out.errors += 1;
            out.first_error
                .get_or_insert_with(|| "responses stopped arriving".to_string());
        }
    }
    out
}

async fn drive(
    server: &mut StdioServer,
    in_flight: usize,
    warmup: Duration,
    measure: Duration,
    out: &mut Outcome,
) -> Result<(), String> {
    let stdin = server.stdin.take().ok_or("stdin already closed")?;
    let mut writer = BufWriter::with_capacity(64 * 1024, stdin);
    let reader = server.stdout.as_mut().ok_or("stdout already closed")?;
    let start = Instant::now();
    let measure_from = start + warmup;
    let end = measure_from + measure;
    let mut pending: HashMap<u64, Instant> = HashMap::with_capacity(in_flight * 2);
    let mut line = Vec::with_capacity(4096);

    let result = async {
        for _ in 0..in_flight {
            send(&mut writer, &mut server.next_id, &mut pending).await?;
        }
        writer.flush().await.map_err(|e| format!("write: {e}"))?;
        while !pending.is_empty() {
            line.clear();
            let n = reader
                .read_until(b'\n', &mut line)
                .await
                .map_err(|e| format!("read: {e}"))?;
            if n == 0 {
                return Err("the server closed stdout".to_string());
            }
            let now = Instant::now();
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            if text.is_empty() {
                continue;
            }
            match wire::check(Expect::Echo, None, text) {
                Ok(Verdict::Notification) => continue,
                Ok(Verdict::Response(id)) => match pending.remove(&id) {
                    Some(sent) => {
                        if now >= measure_from && now < end {
                            out.completed += 1;
                            out.bytes += text.len() as u64;
                            out.hist.record((now - sent).as_nanos() as u64);
                        }
                    }
                    None => {
                        out.errors += 1;
                        out.first_error
                            .get_or_insert_with(|| format!("response to unknown id {id}"));
                        continue;
                    }
                },
                Err(e) => {
                    // A wrong answer: it still frees its slot if its id is known.
                    out.errors += 1;
                    out.first_error.get_or_insert_with(|| {
                        format!(
                            "{e}; line: {}",
                            String::from_utf8_lossy(&text[..text.len().min(300)])
                        )
                    });
                    let id = serde_json::from_slice::<serde_json::Value>(text)
                        .ok()
                        .and_then(|v| v.get("id").and_then(serde_json::Value::as_u64));
                    match id.and_then(|id| pending.remove(&id)) {
                        Some(_) => {}
                        None => return Err("an unpaired wrong answer".to_string()),
                    }
                }
            }
            if now < end {
                send(&mut writer, &mut server.next_id, &mut pending).await?;
            }
            if reader.buffer().is_empty() {
                writer.flush().await.map_err(|e| format!("write: {e}"))?;
            }
        }
        writer.flush().await.map_err(|e| format!("write: {e}"))
    }
    .await;
    server.stdin = Some(writer.into_inner());
    result
}

async fn send<W: tokio::io::AsyncWrite + Unpin>(
    writer: &mut W,
    next_id: &mut u64,
    pending: &mut HashMap<u64, Instant>,
) -> Result<(), String> {
    let id = *next_id;
    *next_id += 1;
    let mut body = Work::Echo.body(id);
    body.push('\n');
    pending.insert(id, Instant::now());
    writer
        .write_all(body.as_bytes())
        .await
        .map_err(|e| format!("write: {e}"))
}

/// Sends one echo call and waits for its correct answer (start-up probes).
pub(crate) async fn one(server: &mut StdioServer) -> Result<(), String> {
    let id = server.next_id;
    server.next_id += 1;
    let stdin = server.stdin.as_mut().ok_or("stdin closed")?;
    let mut body = Work::Echo.body(id);
    body.push('\n');
    stdin
        .write_all(body.as_bytes())
        .await
        .map_err(|e| format!("write: {e}"))?;
    stdin.flush().await.map_err(|e| format!("write: {e}"))?;
    let reader = server.stdout.as_mut().ok_or("stdout closed")?;
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader
            .read_until(b'\n', &mut line)
            .await
            .map_err(|e| format!("read: {e}"))?
            == 0
        {
            return Err("the server closed stdout".into());
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        match wire::check(Expect::Echo, Some(id), text)? {
            Verdict::Notification => continue,
            Verdict::Response(_) => return Ok(()),
        }
    }
}
