//! Each client address's share of a listener's connection places (issue 10 §7, issue 24).
//!
//! The listener's timeouts bound how long one connection can hold a place (a silent or slow
//! client is cut off after the header-read timeout), but not how many places one client holds:
//! a single machine opening a few hundred connections a second, each sending a byte now and then,
//! would otherwise keep every place taken and the service unavailable to everyone else (a
//! slowloris at scale). The rate limit does not see it — a connection that never finishes its
//! headers is never a request. So an address may hold at most [`places_per_address`] of a
//! listener's places; a connection over that share is answered like one over the cap (503 with
//! `Retry-After`) while half of the busy answers are free, and closed at once beyond them
//! (`listener::serve`), while the rest of the places stay free for other addresses.
//!
//! What counts as one address: an IPv4 address, or an IPv6 `/64` (the prefix a single host or
//! home network is normally given, so rotating through the interface part does not buy more
//! places). The host itself (`127.0.0.1`, `::1`) has no share: a reverse proxy on the host
//! brings every participant's connection from there (and limits connections itself), and the
//! load benchmark's participants do too.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::{Arc, Mutex, PoisonError};

/// The places one address may hold at once of a listener with `cap` places: half of them (at
/// least one), so that a single client can never take them all, while a classroom of a few
/// hundred phones behind one school address is still served at once with the default cap of
/// 1 024, and a launch-day burst through a carrier's shared address fills half of a larger one.
#[must_use]
pub fn places_per_address(cap: usize) -> usize {
    (cap / 2).max(1)
}

/// One address as counted: IPv4 whole, IPv6 by its `/64`.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
enum AddressKey {
    V4(Ipv4Addr),
    V6Prefix(u64),
}

impl AddressKey {
    /// The key of `ip`, or `None` for the host itself (no share).
    fn of(ip: IpAddr) -> Option<Self> {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
            v4 @ IpAddr::V4(_) => v4,
        };
        match ip {
            IpAddr::V4(v4) if v4 == Ipv4Addr::LOCALHOST => None,
            IpAddr::V6(v6) if v6 == Ipv6Addr::LOCALHOST => None,
            IpAddr::V4(v4) => Some(Self::V4(v4)),
            // The high 64 bits: the network prefix.
            IpAddr::V6(v6) => Some(Self::V6Prefix((v6.to_bits() >> 64) as u64)),
        }
    }
}

/// The places each address holds, shared by the listener and the claims it gave out.
type Held = Arc<Mutex<HashMap<AddressKey, usize>>>;

/// The places each address holds on one listener.
#[derive(Clone, Debug)]
pub struct AddressShares {
    per_address: usize,
    held: Held,
}

/// One place counted against its address until dropped.
#[derive(Debug)]
pub struct AddressClaim {
    counted: Option<(AddressKey, Held)>,
}

impl AddressShares {
    /// Shares of a listener with `cap` places ([`places_per_address`]).
    #[must_use]
    pub fn new(cap: usize) -> Self {
        Self {
            per_address: places_per_address(cap),
            held: Arc::default(),
        }
    }

    /// The places one address may hold.
    #[must_use]
    pub fn per_address(&self) -> usize {
        self.per_address
    }

    /// Count one more place for `ip`, or `None` when it already holds its share.
    #[must_use]
    pub fn claim(&self, ip: IpAddr) -> Option<AddressClaim> {
        let Some(key) = AddressKey::of(ip) else {
            return Some(AddressClaim { counted: None });
        };
        // A panic while the map is held cannot leave a count half-changed (each change is one
        // statement), so a poisoned lock's map is still right.
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let count = held.entry(key).or_insert(0);
        if *count >= self.per_address {
            return None;
        }
        *count += 1;
        Some(AddressClaim {
            counted: Some((key, self.held.clone())),
        })
    }
}

impl Drop for AddressClaim {
    fn drop(&mut self) {
        let Some((key, held)) = self.counted.take() else {
            return;
        };
        let mut held = held.lock().unwrap_or_else(PoisonError::into_inner);
        // An address that holds nothing leaves the map, which so never has more entries than
        // the listener has places.
        if let Some(count) = held.get_mut(&key) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                held.remove(&key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn an_address_holds_at_most_half_the_places_and_gets_them_back() {
        // Hand-computed: 4 places → 2 an address; 1 → 1; 1 025 → 512.
        assert_eq!(places_per_address(4), 2);
        assert_eq!(places_per_address(1), 1);
        assert_eq!(places_per_address(1025), 512);
        let shares = AddressShares::new(4);
        let first = shares.claim(ip("192.0.2.7")).unwrap();
        let _second = shares.claim(ip("192.0.2.7")).unwrap();
        assert!(shares.claim(ip("192.0.2.7")).is_none(), "a third place");
        assert!(shares.claim(ip("192.0.2.8")).is_some(), "another address");
        drop(first);
        assert!(
            shares.claim(ip("192.0.2.7")).is_some(),
            "a place given back"
        );
    }

    #[test]
    fn an_ipv6_network_is_one_address_and_the_host_itself_has_no_share() {
        let shares = AddressShares::new(2);
        let _one = shares.claim(ip("2001:db8:1:2::1")).unwrap();
        assert!(
            shares.claim(ip("2001:db8:1:2:ffff::9")).is_none(),
            "another interface of the same /64"
        );
        assert!(shares.claim(ip("2001:db8:1:3::1")).is_some(), "another /64");
        let _v4 = shares.claim(ip("198.51.100.1")).unwrap();
        assert!(
            shares.claim(ip("::ffff:198.51.100.1")).is_none(),
            "the same IPv4 address written as IPv6"
        );
        let local: Vec<_> = (0..10)
            .map(|_| shares.claim(ip("127.0.0.1")).and(shares.claim(ip("::1"))))
            .collect();
        assert!(local.iter().all(Option::is_some), "the host itself");
        let _other_loopback = shares.claim(ip("127.0.0.2")).unwrap();
        assert!(
            shares.claim(ip("127.0.0.2")).is_none(),
            "only the host's own addresses have no share"
        );
    }
}
