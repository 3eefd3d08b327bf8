//! Per-client rate limits: a token bucket per address (IPv6 grouped by /64, the block one
//! client usually controls).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::Instant;

/// Buckets kept before idle ones are dropped.
const PRUNE_ABOVE: usize = 10_000;

#[derive(Clone, Copy, Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// A token bucket per client address.
#[derive(Debug)]
pub struct RateLimiter {
    per_second: f64,
    burst: f64,
    buckets: Mutex<HashMap<IpAddr, Bucket>>,
}

impl RateLimiter {
    /// `per_second` requests on average, bursts of up to `burst`.
    pub fn new(per_second: f64, burst: u32) -> Self {
        Self {
            per_second: per_second.max(f64::MIN_POSITIVE),
            burst: f64::from(burst.max(1)),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Take one token for `ip` at `now`: `Ok` or the seconds to wait.
    ///
    /// # Errors
    /// The whole seconds until a token is available.
    pub fn check_at(&self, ip: IpAddr, now: Instant) -> Result<(), u64> {
        let key = group(ip);
        let mut buckets = self
            .buckets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if buckets.len() > PRUNE_ABOVE {
            let (rate, burst) = (self.per_second, self.burst);
            buckets.retain(|_, b| {
                b.tokens + now.saturating_duration_since(b.at).as_secs_f64() * rate < burst
            });
        }
        let bucket = buckets.entry(key).or_insert(Bucket {
            tokens: self.burst,
            at: now,
        });
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
