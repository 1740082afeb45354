//! The user listener's connection limits: at most `limits.max_connections` open connections in
//! all and `limits.max_connections_per_ip` from one client address. A connection past either
//! limit is closed at accept (the client sees the connection close before any byte) and counted;
//! connections already open are never touched. Each admitted connection holds a [`Slot`] that
//! frees its place when the connection ends, however it ends.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

/// Open connections, in all and per client address.
#[derive(Default)]
pub struct ConnectionGate {
    open: Mutex<Counts>,
}

#[derive(Default)]
struct Counts {
    total: usize,
    per_ip: HashMap<IpAddr, usize>,
}

/// Why a connection was not admitted (the metric's `reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// `limits.max_connections` connections are open.
    Total,
    /// `limits.max_connections_per_ip` connections from this address are open.
    PerIp,
}

impl Refused {
    /// The metric label.
    pub fn label(self) -> &'static str {
        match self {
            Self::Total => "total",
            Self::PerIp => "per_ip",
        }
    }
}

/// One admitted connection's place; dropping it frees the place.
pub struct Slot {
    gate: Arc<ConnectionGate>,
    peer: IpAddr,
}

impl ConnectionGate {
    /// Admits a connection from `peer` within the limits, or says which one it would break.
    pub fn admit(
        self: &Arc<Self>,
        peer: IpAddr,
        max_total: usize,
        max_per_ip: usize,
    ) -> Result<Slot, Refused> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if open.total >= max_total {
            return Err(Refused::Total);
        }
        let from_peer = open.per_ip.get(&peer).copied().unwrap_or(0);
        if from_peer >= max_per_ip {
            return Err(Refused::PerIp);
        }
        open.total += 1;
        open.per_ip.insert(peer, from_peer + 1);
        Ok(Slot { gate: Arc::clone(self), peer })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.gate.open.lock().unwrap_or_else(PoisonError::into_inner);
        open.total = open.total.saturating_sub(1);
        if let Some(count) = open.per_ip.get_mut(&self.peer) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                open.per_ip.remove(&self.peer);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_hold_and_places_come_back() {
        let gate = Arc::new(ConnectionGate::default());
        let (one, two) = (IpAddr::from([10, 0, 0, 1]), IpAddr::from([10, 0, 0, 2]));
        let first = gate.admit(one, 3, 2).expect("first");
        let _second = gate.admit(one, 3, 2).expect("second");
        assert_eq!(gate.admit(one, 3, 2).err(), Some(Refused::PerIp));
        let _third = gate.admit(two, 3, 2).expect("another address");
        assert_eq!(gate.admit(two, 3, 2).err(), Some(Refused::Total));
        drop(first);
        assert!(gate.admit(one, 3, 2).is_ok(), "a closed connection frees its place");
    }
}
