//! Per-client rate limits: a token bucket per address (IPv6 grouped by /64, the block one
//! client usually controls).
//!
//! # Forgetting idle clients in O(1)
//! A bucket left alone for `burst / rate` seconds (the *refill time*) is full again, and a full
//! bucket is exactly what a client never seen gets — so it can be forgotten without changing any
//! answer. The buckets live in two generations: `current` and `previous`. Every refill time the
//! generations rotate (`previous` is dropped, `current` becomes `previous`); a client found only
//! in `previous` moves to `current`. Each request costs one or two hash lookups, never a scan,
//! and memory holds only the clients seen in the last two refill times. If a flood of addresses
//! fills `current` past [`MAX_CLIENTS`] before the refill time, the generations rotate early:
//! clients last seen more than one generation ago then start again with a full burst — a
//! leniency towards them, never a refusal of anyone.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Clients kept in one generation before it rotates early.
pub const MAX_CLIENTS: usize = 100_000;

#[derive(Clone, Copy, Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

#[derive(Debug)]
struct Generations {
    current: HashMap<IpAddr, Bucket>,
    previous: HashMap<IpAddr, Bucket>,
    rotated_at: Instant,
}

/// A token bucket per client address.
#[derive(Debug)]
pub struct RateLimiter {
    per_second: f64,
    burst: f64,
    refill: Duration,
    max_clients: usize,
    buckets: Mutex<Option<Generations>>,
}

impl RateLimiter {
    /// `per_second` requests on average, bursts of up to `burst`.
    pub fn new(per_second: f64, burst: u32) -> Self {
        Self::with_capacity(per_second, burst, MAX_CLIENTS)
    }

    /// As [`RateLimiter::new`], rotating early beyond `max_clients` clients per generation.
    pub fn with_capacity(per_second: f64, burst: u32, max_clients: usize) -> Self {
        let per_second = per_second.max(f64::MIN_POSITIVE);
        let burst = f64::from(burst.max(1));
        Self {
            per_second,
            burst,
            refill: Duration::try_from_secs_f64(burst / per_second).unwrap_or(Duration::MAX),
            max_clients: max_clients.max(1),
            buckets: Mutex::new(None),
        }
    }

    /// Take one token for `ip` at `now`: `Ok` or the seconds to wait.
    ///
    /// # Errors
    /// The whole seconds until a token is available.
    pub fn check_at(&self, ip: IpAddr, now: Instant) -> Result<(), u64> {
        let key = group(ip);
        let mut guard = self
            .buckets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let generations = guard.get_or_insert_with(|| Generations {
            current: HashMap::new(),
            previous: HashMap::new(),
            rotated_at: now,
        });
        let due = now.saturating_duration_since(generations.rotated_at) >= self.refill;
        if due || generations.current.len() >= self.max_clients {
            generations.previous = std::mem::take(&mut generations.current);
            generations.rotated_at = now;
        }
        let full = Bucket {
            tokens: self.burst,
            at: now,
        };
        let carried = generations.previous.remove(&key);
        let bucket = generations
            .current
            .entry(key)
            .or_insert_with(|| carried.unwrap_or(full));
        let elapsed = now.saturating_duration_since(bucket.at).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * self.per_second).min(self.burst);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            let wait = (1.0 - bucket.tokens) / self.per_second;
            // Small positive number of seconds; rounding up to whole seconds for Retry-After.
            Err(wait.ceil().max(1.0) as u64)
        }
    }

    /// [`check_at`](Self::check_at) now.
    ///
    /// # Errors
    /// As [`check_at`](Self::check_at).
    pub fn check(&self, ip: IpAddr) -> Result<(), u64> {
        self.check_at(ip, Instant::now())
    }

    /// Clients remembered (both generations).
    pub fn remembered(&self) -> usize {
        self.buckets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .map_or(0, |g| g.current.len() + g.previous.len())
    }
}

fn group(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let mut s = v6.segments();
                s[4..].fill(0);
                IpAddr::V6(s.into())
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn bursts_then_refills_per_client() {
        let limiter = RateLimiter::new(2.0, 3);
        let t0 = Instant::now();
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        for _ in 0..3 {
            assert!(limiter.check_at(a, t0).is_ok());
        }
        assert_eq!(limiter.check_at(a, t0), Err(1));
        assert!(limiter.check_at(b, t0).is_ok());
        // Half a second at 2/s refills one token.
        assert!(limiter.check_at(a, t0 + Duration::from_millis(500)).is_ok());
        assert!(
            limiter
                .check_at(a, t0 + Duration::from_millis(500))
                .is_err()
        );
    }

    /// Forgetting is exact: a client idle for a whole refill time is full again, so dropping
    /// its bucket changes no answer; and a limited client stays limited across a rotation.
    #[test]
    fn idle_clients_are_forgotten_without_changing_any_answer() {
        // 2 per second, burst 4: refill time 2 s.
        let limiter = RateLimiter::new(2.0, 4);
        let t0 = Instant::now();
        let busy: IpAddr = "10.0.0.1".parse().unwrap();
        for i in 0..1000u32 {
            let ip = IpAddr::from([192, 168, (i / 256) as u8, (i % 256) as u8]);
            assert!(limiter.check_at(ip, t0).is_ok());
        }
        for _ in 0..4 {
            assert!(limiter.check_at(busy, t0).is_ok());
        }
        assert_eq!(limiter.remembered(), 1001);
        // Before the refill time the busy client is still limited (1.5 s × 2 = 3 tokens) …
        let t1 = t0 + Duration::from_millis(1500);
        for _ in 0..3 {
            assert!(limiter.check_at(busy, t1).is_ok());
        }
        assert!(limiter.check_at(busy, t1).is_err());
        // … and across the rotation at 2 s it keeps its state (0.5 s → one token), rather than
        // starting again with a full burst of 4.
        let t2 = t0 + Duration::from_millis(2000);
        assert!(limiter.check_at(busy, t2).is_ok());
        assert!(
            limiter.check_at(busy, t2).is_err(),
            "carried over, not reset"
        );
        // Two refill times later every idle client is gone.
        let t3 = t0 + Duration::from_secs(6);
        assert!(limiter.check_at(busy, t3).is_ok());
        assert_eq!(limiter.remembered(), 1);
    }

    /// A flood of fresh addresses cannot grow the table without bound.
    #[test]
    fn a_flood_of_addresses_is_bounded() {
        let limiter = RateLimiter::with_capacity(1.0, 10, 100);
        let t0 = Instant::now();
        for i in 0..10_000u32 {
            let ip = IpAddr::from(i.to_be_bytes());
            assert!(limiter.check_at(ip, t0).is_ok());
            assert!(limiter.remembered() <= 200);
        }
    }

    #[test]
    fn ipv6_clients_are_grouped_by_slash_64() {
        let limiter = RateLimiter::new(1.0, 1);
        let t0 = Instant::now();
        assert!(limiter.check_at("2001:db8::1".parse().unwrap(), t0).is_ok());
        assert!(
            limiter
                .check_at("2001:db8::2".parse().unwrap(), t0)
                .is_err()
        );
        assert!(
            limiter
                .check_at("2001:db8:0:1::1".parse().unwrap(), t0)
                .is_ok()
        );
    }
}
