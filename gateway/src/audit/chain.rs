//! The hash chain: every record carries its sequence number, UTC time, the previous record's
//! hash and its own (SHA-256 over a canonical encoding of everything else), so changing,
//! removing, reordering or inserting a record breaks the chain at that point.

use super::event::AuditEvent;
use crate::http::hex;
use aws_lc_rs::digest;
use serde::{Deserialize, Serialize};

/// The `prev` of the first record ever written.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// One stored audit record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Position in the log, from 1, without gaps.
    pub seq: u64,
    /// When it was written (RFC 3339, UTC, milliseconds). The clock may step back; `seq` never does.
    pub time: String,
    /// The previous record's hash (or the checkpoint's, or `GENESIS`).
    pub prev: String,
    /// What happened.
    pub event: AuditEvent,
    /// SHA-256 (hex) of the canonical encoding of the fields above.
    pub hash: String,
}

/// The hashed part of a record, in a fixed field order; `serde_json` writes maps sorted, so the
/// encoding is canonical.
#[derive(Serialize)]
struct Hashed<'a> {
    seq: u64,
    time: &'a str,
    prev: &'a str,
    event: &'a AuditEvent,
}

impl Record {
    /// Seals a new record after `prev`.
    pub fn seal(seq: u64, time: String, prev: String, event: AuditEvent) -> Self {
        let hash = compute(seq, &time, &prev, &event);
        Self { seq, time, prev, event, hash }
    }

    /// Whether the stored hash matches the content.
    pub fn hash_is_valid(&self) -> bool {
        compute(self.seq, &self.time, &self.prev, &self.event) == self.hash
    }

    /// The store key: the sequence number, big-endian, so key order is log order.
    pub fn key(seq: u64) -> [u8; 8] {
        seq.to_be_bytes()
    }
}

fn compute(seq: u64, time: &str, prev: &str, event: &AuditEvent) -> String {
    let encoded = serde_json::to_vec(&Hashed { seq, time, prev, event }).unwrap_or_default();
    let mut context = digest::Context::new(&digest::SHA256);
    context.update(b"toolgate-audit-v1\n");
    context.update(&encoded);
    hex(context.finish().as_ref())
}
