//! Approvals for safety-critical tool calls: the record a human decides on, the HMAC token the
//! approved call carries, and the single use of that token.
//!
//! Threat model: the model and page text are untrusted and the browser runtime is not a security
//! boundary, so an approval must not be reusable for other arguments, another user, session,
//! site, tool or call, after its expiry, or twice. Tokens are HMAC-SHA256 over the whole binding
//! and the approval id (unforgeable without the gateway's key); every state change is a
//! compare-and-swap on the stored record, so of two racing submissions exactly one consumes it.
//! Group approvals follow four eyes: a member of the group other than the user who asked.
//!
//! Layer 3 of the gateway (ARCHITECTURE.md, "Code map"): may import `http`, `inventory`, `store`,
//! `support`.

mod error;
mod form_approval;
pub mod form_guard;
mod gated_forms;
mod multipart;
mod record;
mod token;

pub use error::ApprovalError;
pub use form_approval::FormSubmission;
pub use gated_forms::{GatedForms, reported_target};
pub use record::{ApprovalRecord, ApprovalState, Approver, Binding, FormTarget};

use crate::inventory::{canonical_json, sha256_hex};
use crate::store::{StoreHandle, Table};
use crate::support::clock::unix_now;
use crate::support::random::random_bytes;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use std::time::Duration;
use token::ApprovalKeys;
use tokio::sync::watch;
use tokio::time::Instant;

/// Largest canonical arguments an approval may carry (what the approver reads must fit a card).
pub const MAX_CANONICAL_ARGS: usize = 64 * 1024;
/// Longest decision comment.
pub const MAX_COMMENT: usize = 1024;
/// Longest reason kept (longer ones are cut).
const MAX_REASON: usize = 1024;
/// Tries of the read-check-compare-and-swap cycle before giving up.
const CAS_ATTEMPTS: usize = 16;
/// Records are kept this long past their expiry (for the panel and the dashboard), then swept.
const RETENTION_SECONDS: u64 = 3600;
/// A waiter re-reads the store at least this often, in case a decision another replica made was
/// not announced (its notice lost to a reconnection).
const POLL_INTERVAL: Duration = Duration::from_secs(2);
/// Who decides an approval: a user, their groups, and whether they administer the gateway
/// (administrators decide any group's approval, never their own call).
#[derive(Debug, Clone, Copy)]
pub struct Decider<'a> {
    /// The user deciding.
    pub user: &'a str,
    /// Their groups.
    pub groups: &'a [String],
    /// Whether they are in `[dashboard] admin_groups`.
    pub admin: bool,
}

impl<'a> Decider<'a> {
    /// A user who decides for their groups.
    pub fn member(user: &'a str, groups: &'a [String]) -> Self {
        Self { user, groups, admin: false }
    }
}

/// Which pending group approvals a caller sees.
#[derive(Debug, Clone, Copy)]
pub enum Queue<'a> {
    /// Those of these approver groups.
    Groups(&'a [String]),
    /// Every one (administrators decide them, auditors read them).
    Everything,
}

/// Most records `pending_for` returns (oldest first).
const MAX_PENDING_LISTED: usize = 1000;

/// Approvals over the store.
pub struct Approvals {
    store: StoreHandle,
    keys: ApprovalKeys,
    /// Bumped on every state change this process makes; waiters re-read their record.
    changes: watch::Sender<u64>,
}

/// What a transition function decided.
enum Step {
    /// Move the record to this state.
    Move(ApprovalState),
    /// Mark the record expired, then fail with [`ApprovalError::Expired`].
    Expire,
    /// Leave the record alone and return it.
    Keep,
}

impl Approvals {
    /// Approvals kept in `store`, with tokens signed by keys derived from `key`.
    pub fn new(store: StoreHandle, key: [u8; 32]) -> Self {
        Self { store, keys: ApprovalKeys::new(&key), changes: watch::Sender::new(0) }
    }

    /// The keyed digest of a raw session id that goes into [`Binding::session`].
    pub fn session_digest(&self, session_id: &[u8]) -> String {
        self.keys.session_digest(session_id)
    }

    /// Records a pending approval. `binding.args_digest` must be the digest of `canonical_args`,
    /// which must be canonical JSON ([`canonical_args`]) of at most 64 KiB.
    pub async fn request(
        &self,
        binding: Binding,
        canonical_args: String,
        approver: Approver,
        reason: &str,
        form: Option<FormTarget>,
        now: u64,
    ) -> Result<ApprovalRecord, ApprovalError> {
        record::validate(&binding, &canonical_args, &approver, form.as_ref(), now)?;
        let mut record = ApprovalRecord {
            id: String::new(),
            binding,
            canonical_args,
            approver,
            reason: truncate(reason, MAX_REASON),
            requested_at: now,
            state: ApprovalState::Pending,
            form,
        };
        for _ in 0..CAS_ATTEMPTS {
            record.id = URL_SAFE_NO_PAD.encode(random_bytes::<16>());
            let bytes = encode(&record)?;
            // Insert only if absent: a colliding id never overwrites another approval.
            if self.store.compare_and_swap(Table::Approvals, record.id.as_bytes(), None, Some(&bytes)).await?
            {
                self.changed(&record.id).await;
                return Ok(record);
            }
        }
        Err(ApprovalError::Contended)
    }

    /// The record with this id.
    pub async fn get(&self, id: &str) -> Result<Option<ApprovalRecord>, ApprovalError> {
        Ok(self.read(id).await?.map(|(record, _)| record))
    }

    /// Approves or denies. For [`Approver::User`] only the user who asked may decide; for
    /// [`Approver::Group`] only a member of the group who is not that user. Only `Pending` moves
    /// (compare-and-swap); past its expiry the record becomes `Expired` and the call fails.
    pub async fn decide(
        &self,
        id: &str,
        decider: &Decider<'_>,
        approve: bool,
        comment: &str,
        now: u64,
    ) -> Result<ApprovalRecord, ApprovalError> {
        if comment.len() > MAX_COMMENT {
            return Err(ApprovalError::CommentTooLong);
        }
        self.update(id, |record| {
            let decider_user = decider.user;
            match &record.approver {
                Approver::User if decider_user != record.binding.user => {
                    return Err(ApprovalError::NotAllowed);
                }
                Approver::User => {}
                Approver::Group(group)
                    if !decider.admin && !decider.groups.iter().any(|member_of| member_of == group) =>
                {
                    return Err(ApprovalError::NotAllowed);
                }
                // Four eyes, for administrators too.
                Approver::Group(_) if decider_user == record.binding.user => {
                    return Err(ApprovalError::SelfApproval);
                }
                Approver::Group(_) => {}
            }
            match record.state {
                ApprovalState::Pending if record.is_expired(now) => Ok(Step::Expire),
                ApprovalState::Pending => {
                    let (by, at, comment) = (decider_user.to_owned(), now, comment.to_owned());
                    let state = if approve {
                        ApprovalState::Approved { by, at, comment }
                    } else {
                        ApprovalState::Denied { by, at, comment }
                    };
                    Ok(Step::Move(state))
                }
                ApprovalState::Expired => Err(ApprovalError::Expired),
                _ => Err(ApprovalError::AlreadyDecided),
            }
        })
        .await
    }

    /// Resolves when the record leaves `Pending`, or at `deadline` (or the binding's expiry,
    /// whichever is first) with the record marked `Expired`. Decisions made in this process, and
    /// those another replica announces, wake it at once; the store is re-read every 2 s anyway.
    pub async fn wait(&self, id: &str, deadline: Instant) -> Result<ApprovalRecord, ApprovalError> {
        let mut changes = self.changes.subscribe();
        loop {
            // Mark the current version seen before reading, so a change after the read wakes us.
            let _ = changes.borrow_and_update();
            let record = self.get(id).await?.ok_or(ApprovalError::Unknown)?;
            if record.state != ApprovalState::Pending {
                return Ok(record);
            }
            let until = deadline.min(
                Instant::now() + Duration::from_secs(record.binding.expires_at.saturating_sub(unix_now())),
            );
            if Instant::now() >= until {
                return self.expire(id).await;
            }
            let poll = until.min(Instant::now() + POLL_INTERVAL);
            tokio::select! {
                changed = changes.changed() => {
                    // The sender lives as long as `self`; if it were gone, fall back to polling.
                    if changed.is_err() {
                        tokio::time::sleep_until(poll).await;
                    }
                }
                () = tokio::time::sleep_until(poll) => {}
            }
        }
    }

    /// The token the runtime carries for an approved call.
    pub fn token(&self, record: &ApprovalRecord) -> String {
        self.keys.sign(&record.id, &record.binding)
    }

    /// Exactly once: verifies `token` against the approval it names and `expected` (user,
    /// session, site, tool, args digest, call id; `expected.expires_at` is not compared — the
    /// record's expiry, signed into the token, governs) and moves `Approved → Consumed` with
    /// compare-and-swap. Each way of failing has its own error.
    pub async fn consume(
        &self,
        token: &str,
        expected: &Binding,
        now: u64,
    ) -> Result<ApprovalRecord, ApprovalError> {
        self.consume_with(token, now, |binding| {
            let checks = [
                (binding.user == expected.user, ApprovalError::OtherUser),
                (binding.session == expected.session, ApprovalError::OtherSession),
                (binding.site == expected.site, ApprovalError::OtherSite),
                (binding.tool == expected.tool, ApprovalError::OtherTool),
                (binding.call_id == expected.call_id, ApprovalError::OtherCall),
                (binding.args_digest == expected.args_digest, ApprovalError::ArgumentsChanged),
            ];
            checks.into_iter().find(|(matches, _)| !matches).map_or(Ok(()), |(_, error)| Err(error))
        })
        .await
    }

    /// Pending group approvals in `queue` (the dashboard's and the approvals API's), oldest
    /// first, without those past their expiry.
    pub async fn pending_for(&self, queue: Queue<'_>) -> Result<Vec<ApprovalRecord>, ApprovalError> {
        let now = unix_now();
        let mut pending = Vec::new();
        let mut from = Vec::new();
        loop {
            let batch = self.store.range(Table::Approvals, &from, 256).await?;
            let Some((last_key, _)) = batch.last() else { break };
            from = last_key.clone();
            from.push(0);
            let done = batch.len() < 256;
            for (_, value) in batch {
                let Ok(record) = serde_json::from_slice::<ApprovalRecord>(&value) else { continue };
                let mine = match (&record.approver, queue) {
                    (Approver::Group(_), Queue::Everything) => true,
                    (Approver::Group(group), Queue::Groups(groups)) => groups.contains(group),
                    (Approver::User, _) => false,
                };
                if mine && record.state == ApprovalState::Pending && !record.is_expired(now) {
                    pending.push(record);
                }
            }
            if done {
                break;
            }
        }
        pending.sort_by(|one, other| one.requested_at.cmp(&other.requested_at).then(one.id.cmp(&other.id)));
        pending.truncate(MAX_PENDING_LISTED);
        Ok(pending)
    }

    /// Removes records an hour past their expiry (and unreadable ones); returns how many.
    pub async fn sweep(&self, now: u64) -> Result<usize, ApprovalError> {
        let stale = move |bytes: &[u8]| {
            serde_json::from_slice::<ApprovalRecord>(bytes)
                .map_or(true, |record| now >= record.binding.expires_at.saturating_add(RETENTION_SECONDS))
        };
        Ok(self.store.sweep(Table::Approvals, stale).await?)
    }

    /// The shared part of [`Self::consume`] and [`Self::consume_form`]: token → record, tag
    /// check, caller's binding check, state check, compare-and-swap to `Consumed`.
    async fn consume_with(
        &self,
        token: &str,
        now: u64,
        check: impl Fn(&Binding) -> Result<(), ApprovalError>,
    ) -> Result<ApprovalRecord, ApprovalError> {
        let (id, tag) = token::parse(token).ok_or(ApprovalError::MalformedToken)?;
        self.update(id, |record| {
            if !self.keys.verify(&record.id, &record.binding, &tag) {
                return Err(ApprovalError::InvalidToken);
            }
            check(&record.binding)?;
            match record.state {
                ApprovalState::Approved { .. } if record.is_expired(now) => Err(ApprovalError::Expired),
                ApprovalState::Approved { .. } => Ok(Step::Move(ApprovalState::Consumed { at: now })),
                ApprovalState::Consumed { .. } => Err(ApprovalError::Replayed),
                ApprovalState::Denied { .. } => Err(ApprovalError::Denied),
                ApprovalState::Expired => Err(ApprovalError::Expired),
                ApprovalState::Pending if record.is_expired(now) => Err(ApprovalError::Expired),
                ApprovalState::Pending => Err(ApprovalError::NotApproved),
            }
        })
        .await
    }

    /// Marks a pending record expired (a waiter's deadline passed); a record decided meanwhile
    /// is returned as decided.
    async fn expire(&self, id: &str) -> Result<ApprovalRecord, ApprovalError> {
        let result = self
            .update(id, |record| {
                Ok(if record.state == ApprovalState::Pending { Step::Expire } else { Step::Keep })
            })
            .await;
        match result {
            Err(ApprovalError::Expired) => self.get(id).await?.ok_or(ApprovalError::Unknown),
            other => other,
        }
    }

    /// Read, decide with `step`, compare-and-swap; retried when another writer got there first.
    async fn update(
        &self,
        id: &str,
        step: impl Fn(&ApprovalRecord) -> Result<Step, ApprovalError>,
    ) -> Result<ApprovalRecord, ApprovalError> {
        for _ in 0..CAS_ATTEMPTS {
            let (record, old) = self.read(id).await?.ok_or(ApprovalError::Unknown)?;
            let (new, outcome) = match step(&record)? {
                Step::Keep => return Ok(record),
                Step::Move(state) => (ApprovalRecord { state, ..record }, None),
                Step::Expire => {
                    (ApprovalRecord { state: ApprovalState::Expired, ..record }, Some(ApprovalError::Expired))
                }
            };
            let bytes = encode(&new)?;
            if self.store.compare_and_swap(Table::Approvals, id.as_bytes(), Some(&old), Some(&bytes)).await? {
                self.changed(id).await;
                return outcome.map_or(Ok(new), Err);
            }
        }
        Err(ApprovalError::Contended)
    }

    async fn read(&self, id: &str) -> Result<Option<(ApprovalRecord, Vec<u8>)>, ApprovalError> {
        if !token::is_id(id) {
            return Ok(None);
        }
        let Some(bytes) = self.store.get(Table::Approvals, id.as_bytes()).await? else { return Ok(None) };
        let record = serde_json::from_slice(&bytes).map_err(|_| ApprovalError::Corrupt(id.to_owned()))?;
        Ok(Some((record, bytes)))
    }

    /// Wakes this process's waiters and tells the other replicas' (a lost notice costs them at
    /// most one poll interval, so a failure is only logged).
    async fn changed(&self, id: &str) {
        self.changed_elsewhere();
        if let Err(error) = self.store.announce("approval", id).await {
            tracing::warn!(error = %error, "an approval change could not be announced to the other replicas");
        }
    }

    /// An approval changed on another replica (or notices may have been missed): every waiter
    /// re-reads its record.
    pub fn changed_elsewhere(&self) {
        self.changes.send_modify(|version| *version = version.wrapping_add(1));
    }
}

/// Canonical JSON of tool arguments: object keys sorted at every level, no whitespace. What
/// the approver is shown is exactly what is digested and executed.
pub fn canonical_args(value: &serde_json::Value) -> String {
    canonical_json(value)
}

/// SHA-256 (hex) of canonical arguments.
pub fn args_digest(canonical: &str) -> String {
    sha256_hex(canonical.as_bytes())
}

fn encode(record: &ApprovalRecord) -> Result<Vec<u8>, ApprovalError> {
    serde_json::to_vec(record)
        .map_err(|error| ApprovalError::Store(crate::store::StoreError(error.to_string())))
}

fn truncate(text: &str, limit: usize) -> String {
    let mut end = text.len().min(limit);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

#[cfg(test)]
mod tests;
