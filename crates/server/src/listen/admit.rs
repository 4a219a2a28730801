//! Connection admission: a global count and a count per client address,
//! each with its maximum.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The open connections, in all and per client address.
#[derive(Debug)]
pub(super) struct Admission {
    inner: Arc<Counts>,
}

#[derive(Debug)]
struct Counts {
    max_total: usize,
    max_per_ip: usize,
    open: Mutex<Open>,
}

#[derive(Debug, Default)]
struct Open {
    total: usize,
    per_ip: HashMap<IpAddr, usize>,
}

impl Counts {
    fn open(&self) -> MutexGuard<'_, Open> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One admitted connection; dropping it gives its places back.
#[derive(Debug)]
pub(super) struct Ticket {
    counts: Arc<Counts>,
    ip: IpAddr,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut open = self.counts.open();
        open.total = open.total.saturating_sub(1);
        if let Some(n) = open.per_ip.get_mut(&self.ip) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.per_ip.remove(&self.ip);
            }
        }
    }
}

impl Admission {
    pub(super) fn new(max_total: usize, max_per_ip: usize) -> Self {
        Self {
            inner: Arc::new(Counts {
                max_total,
                max_per_ip,
                open: Mutex::default(),
            }),
        }
    }

    /// A place for a connection from `ip`, or `None` when all of them, or
    /// all of that address's, are taken. An IPv4 address mapped into IPv6
    /// counts as itself.
    pub(super) fn admit(&self, ip: IpAddr) -> Option<Ticket> {
        let ip = ip.to_canonical();
        let mut open = self.inner.open();
        let of_ip = open.per_ip.get(&ip).copied().unwrap_or(0);
        if open.total >= self.inner.max_total || of_ip >= self.inner.max_per_ip {
            return None;
        }
        open.total += 1;
        open.per_ip.insert(ip, of_ip + 1);
        drop(open);
        Some(Ticket {
            counts: Arc::clone(&self.inner),
            ip,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_counted_per_address_and_in_all_and_given_back() {
        let admission = Admission::new(3, 2);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let mapped: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let first = admission.admit(a).unwrap();
        let _second = admission.admit(mapped).unwrap();
        assert!(admission.admit(a).is_none(), "a third from one address");
        let _third = admission.admit(b).unwrap();
        assert!(admission.admit("10.0.0.3".parse().unwrap()).is_none());
        drop(first);
        let again = admission.admit(a);
        assert!(again.is_some());
        assert_eq!(admission.inner.open().total, 3);
        drop(again);
        assert_eq!(admission.inner.open().per_ip.get(&a), Some(&1));
    }
}
