//! The transitions of a task record, as pure functions on a [`TaskRecord`].
//!
//! Every store applies the same rules; a store that keeps whole records (in
//! memory, or as a document in a database row it locks) can call these under
//! its lock or transaction instead of restating them.

use std::time::Duration;

use serde_json::{Map, Value};

use super::model::{Lease, NewTask, TaskRecord, TaskStatus, new_task_id};
use super::store::{Answered, Cancelled, Settle, StoreError};
use crate::RandomUnavailable;

/// Checks a new task before it is stored: its id has 1 to
/// [`MAX_TASK_ID`](super::model::MAX_TASK_ID) bytes, its work at most
/// [`MAX_TASK_WORK_BYTES`](super::model::MAX_TASK_WORK_BYTES) encoded.
pub fn check_new(task: &NewTask) -> Result<(), StoreError> {
    let max = super::model::MAX_TASK_ID;
    if task.task_id.is_empty() || task.task_id.len() > max {
        return Err(StoreError::Invalid(format!(
            "a task id has 1 to {max} bytes"
        )));
    }
    let max = super::model::MAX_TASK_WORK_BYTES;
    if crate::wire::encoded_len(&task.work) > max {
        return Err(StoreError::Invalid(format!(
            "a task's arguments take at most {max} bytes"
        )));
    }
    Ok(())
}

/// Gives the record a new lease (a new random token, the next generation)
/// and counts the attempt.
///
/// # Errors
///
/// [`RandomUnavailable`] when the operating system's random source fails;
/// the record is left as it was (a store turns it into
/// [`StoreError::Random`] with `?`).
pub fn lease(
    record: &mut TaskRecord,
    holder: &str,
    duration: Duration,
    now: u64,
) -> Result<Lease, RandomUnavailable> {
    let token = new_task_id()?;
    record.attempts = record.attempts.saturating_add(1);
    let lease = Lease {
        task_id: record.task_id.clone(),
        holder: holder.to_string(),
        token,
        generation: u64::from(record.attempts),
        expires_at_ms: now.saturating_add(duration.as_millis() as u64),
    };
    record.lease = Some(lease.clone());
    touch(record, now);
    Ok(lease)
}

/// Marks a change: a later `lastUpdatedAt` and the next revision.
pub fn touch(record: &mut TaskRecord, now: u64) {
    record.last_updated_at_ms = now.max(record.last_updated_at_ms);
    record.revision += 1;
}

/// Whether a worker may claim the task: `working`, unexpired, and no
/// current lease.
pub fn claimable(record: &TaskRecord, now: u64) -> bool {
    record.status == TaskStatus::Working
        && !record.is_expired(now)
        && record.lease.as_ref().is_none_or(|l| l.expires_at_ms <= now)
}

/// What recovering a claimable task does to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Orphan {
    /// Run it (again): nothing ran it, or its node stopped and it had a
    /// retry left (now used).
    Run,
    /// Its node stopped and it was out of retries: it is `failed` now.
    Failed,
    /// Its node stopped after the client asked to cancel: it is `cancelled`
    /// now.
    Cancelled,
}

/// Recovers a claimable task: a lapsed lease uses a retry, fails the task
/// when none is left, or cancels it when a cancellation was asked for; a task
/// no worker held is simply run. Call it before [`lease`], on claimable
/// records only.
pub fn recover(record: &mut TaskRecord, now: u64) -> Orphan {
    if record.lease.is_none() {
        return Orphan::Run;
    }
    if record.cancel_requested {
        settle(record, Settle::Cancelled, now);
        return Orphan::Cancelled;
    }
    if record.retries == 0 {
        settle(
            record,
            Settle::Failed(super::model::node_stopped_error()),
            now,
        );
        return Orphan::Failed;
    }
    record.retries -= 1;
    Orphan::Run
}

/// Sets the status message of a running task (its worker's progress).
pub fn note(record: &mut TaskRecord, message: String, now: u64) {
    record.status_message = Some(message);
    touch(record, now);
}

/// Applies a worker's outcome and releases its lease. A result, or input
/// requests with their state, larger than
/// [`MAX_TASK_RESULT_BYTES`](super::model::MAX_TASK_RESULT_BYTES) fail the
/// task instead.
pub fn settle(record: &mut TaskRecord, outcome: Settle, now: u64) {
    let max = super::model::MAX_TASK_RESULT_BYTES;
    let size = match &outcome {
        Settle::Completed(result) => crate::wire::encoded_len(result),
        Settle::InputRequired { requests, state } => {
            crate::wire::encoded_len(requests) + state.as_ref().map_or(0, String::len)
        }
        Settle::Failed(error) => crate::wire::encoded_len(error),
        Settle::Cancelled => 0,
    };
    let outcome = if size > max {
        Settle::Failed(serde_json::json!({
            "code": -32603,
            "message": format!("The task's outcome is larger than {max} bytes, the most a task keeps"),
        }))
    } else {
        outcome
    };
    match outcome {
        Settle::Completed(result) => {
            record.status = TaskStatus::Completed;
            record.result = Some(result);
            record.input_requests.clear();
        }
        Settle::Failed(error) => {
            record.status = TaskStatus::Failed;
            record.status_message = error
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string);
            record.error = Some(error);
            record.input_requests.clear();
        }
        Settle::InputRequired { requests, state } => {
            for key in requests.keys() {
                if !record.used_keys.contains(key) {
                    record.used_keys.push(key.clone());
                }
            }
            record.input_requests.extend(requests);
            record.request_state = state;
            record.status = if record.input_requests.is_empty() {
                TaskStatus::Working
            } else {
                TaskStatus::InputRequired
            };
        }
        Settle::Cancelled => {
            record.status = TaskStatus::Cancelled;
            record.input_requests.clear();
        }
    }
    record.lease = None;
    touch(record, now);
}

/// Applies the answers of `tasks/update`: outstanding keys move to the
/// responses, other keys are ignored; with nothing left outstanding the task
/// is `working` again, unclaimed. Answers that would take the task's past
/// [`MAX_TASK_ANSWER_BYTES`](super::model::MAX_TASK_ANSWER_BYTES) are refused
/// whole ([`Answered::TooLarge`]).
pub fn answer(record: &mut TaskRecord, responses: Map<String, Value>, now: u64) -> Answered {
    if record.status != TaskStatus::InputRequired {
        return Answered::Accepted { ready: false };
    }
    let max = super::model::MAX_TASK_ANSWER_BYTES;
    let taken: usize = responses
        .iter()
        .filter(|(key, _)| record.input_requests.contains_key(*key))
        .map(|(key, value)| key.len() + crate::wire::encoded_len(value))
        .sum();
    if taken > 0 && crate::wire::encoded_len(&record.input_responses) + taken > max {
        return Answered::TooLarge { limit: max };
    }
    let mut taken = false;
    for (key, value) in responses {
        if record.input_requests.remove(&key).is_some() {
            record.input_responses.insert(key, value);
            taken = true;
        }
    }
    let ready = record.input_requests.is_empty();
    if ready {
        record.status = TaskStatus::Working;
        record.lease = None;
    }
    if taken {
        touch(record, now);
    }
    Answered::Accepted { ready }
}

/// Applies `tasks/cancel`: a terminal task is left alone, a running one is
/// asked to stop, any other is cancelled at once.
pub fn cancel(record: &mut TaskRecord, now: u64) -> Cancelled {
    if record.status.is_terminal() {
        return Cancelled::AlreadyTerminal;
    }
    let running = record.status == TaskStatus::Working
        && record.lease.as_ref().is_some_and(|l| l.expires_at_ms > now);
    if running {
        if !record.cancel_requested {
            record.cancel_requested = true;
            touch(record, now);
        }
        return Cancelled::Requested;
    }
    settle(record, Settle::Cancelled, now);
    Cancelled::Now
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::task::model::{MAX_TASK_ANSWER_BYTES, MAX_TASK_RESULT_BYTES, MAX_TASK_WORK_BYTES};

    fn record() -> TaskRecord {
        TaskRecord::from_new(NewTask::new("", "t", json!({})).unwrap())
    }

    #[test]
    fn no_task_and_no_lease_without_the_random_source() {
        let mut r = record();
        let before = r.clone();
        let _off = crate::random::failing();
        assert!(NewTask::new("", "t", json!({})).is_err());
        assert!(new_task_id().is_err());
        assert!(lease(&mut r, "node", Duration::from_secs(1), 5).is_err());
        assert_eq!(r, before, "a lease that could not be drawn changes nothing");
        assert!(matches!(
            StoreError::from(new_task_id().unwrap_err()),
            StoreError::Random(_)
        ));
    }

    #[test]
    fn work_over_its_bound_is_refused() {
        let pad = "x".repeat(MAX_TASK_WORK_BYTES);
        let task = NewTask::new("", "t", json!({ "pad": pad })).unwrap();
        assert!(matches!(check_new(&task), Err(StoreError::Invalid(_))));
        assert!(check_new(&NewTask::new("", "t", json!({"small": 1})).unwrap()).is_ok());
    }

    #[test]
    fn a_result_over_its_bound_fails_the_task() {
        let mut r = record();
        let big = json!({"content": [{"type": "text", "text": "x".repeat(MAX_TASK_RESULT_BYTES)}]});
        settle(&mut r, Settle::Completed(big), 1);
        assert_eq!(r.status, TaskStatus::Failed);
        assert!(r.result.is_none());
        assert!(r.status_message.unwrap().contains("larger than"));
        let mut r = record();
        settle(&mut r, Settle::Completed(json!({"content": []})), 1);
        assert_eq!(r.status, TaskStatus::Completed);
    }

    #[test]
    fn answers_over_their_bound_are_refused_whole() {
        let mut r = record();
        let mut requests = Map::new();
        requests.insert("a".into(), json!({"method": "elicitation/create"}));
        requests.insert("b".into(), json!({"method": "elicitation/create"}));
        settle(
            &mut r,
            Settle::InputRequired {
                requests,
                state: None,
            },
            1,
        );
        let mut answers = Map::new();
        answers.insert("a".into(), json!("x".repeat(MAX_TASK_ANSWER_BYTES)));
        answers.insert("b".into(), json!(true));
        assert_eq!(
            answer(&mut r, answers, 2),
            Answered::TooLarge {
                limit: MAX_TASK_ANSWER_BYTES
            }
        );
        assert_eq!(r.input_requests.len(), 2, "nothing taken");
        let mut small = Map::new();
        small.insert("b".into(), json!(true));
        assert_eq!(
            answer(&mut r, small, 3),
            Answered::Accepted { ready: false }
        );
    }
}
