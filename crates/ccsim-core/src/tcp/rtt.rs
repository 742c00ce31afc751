//! RTT estimation and the retransmission timeout.
//!
//! Reference: Linux `net/ipv4/tcp_input.c` `tcp_rtt_estimator()` and `tcp_set_rto()`
//! (Van Jacobson's SIGCOMM '88 estimator with Linux's refinements): SRTT gain 1/8, mean
//! deviation gain 1/4 (1/32 when the sample is below SRTT), `rttvar` kept at least
//! `rto_min` (200 ms) and decayed towards the per-window maximum deviation once per
//! window, `RTO = SRTT + rttvar`, at most `TCP_RTO_MAX` = 120 s, initially 1 s
//! (RFC 6298 §2.1). Linux works in microseconds; ccsim in nanoseconds, with the same
//! fixed-point scaling (SRTT x 8, mdev x 4).
//!
//! Departures: RFC 6298 §2 computes `RTO = max(SRTT + 4 RTTVAR, 1 s)`; Linux (and ccsim)
//! instead floor the variance term at `rto_min`, which gives `RTO ~= SRTT + 200 ms` on
//! stable paths.

/// Linux `TCP_RTO_MAX`.
pub const RTO_MAX_NS: u64 = 120_000_000_000;
/// Linux `TCP_TIMEOUT_INIT` (RFC 6298 §2.1).
pub const RTO_INIT_NS: u64 = 1_000_000_000;

/// The estimator state (Linux `srtt_us`, `mdev_us`, `mdev_max_us`, `rttvar_us`, `rtt_seq`).
#[derive(Debug, Clone)]
pub struct RttEstimator {
    srtt8: u64,
    mdev4: u64,
    mdev_max: u64,
    rttvar: u64,
    rtt_seq: u64,
    min_rto_ns: u64,
    min_rtt_ns: u64,
    latest_ns: u64,
}

impl RttEstimator {
    pub fn new(min_rto_ns: u64) -> Self {
        RttEstimator {
            srtt8: 0,
            mdev4: 0,
            mdev_max: 0,
            rttvar: 0,
            rtt_seq: 0,
            min_rto_ns,
            min_rtt_ns: u64::MAX,
            latest_ns: 0,
        }
    }

    /// Feed one RTT sample taken when `snd_una`/`snd_nxt` were as given.
    pub fn sample(&mut self, rtt_ns: u64, snd_una: u64, snd_nxt: u64) {
        let m = rtt_ns.max(1) as i64;
        self.latest_ns = m as u64;
        if self.srtt8 != 0 {
            let mut m = m - (self.srtt8 >> 3) as i64; // error in the estimate
            self.srtt8 = (self.srtt8 as i64 + m) as u64; // srtt = 7/8 srtt + 1/8 sample
            if m < 0 {
                m = -m - (self.mdev4 >> 2) as i64;
                // Eifel-like: a sample below srtt moves mdev with gain 1/32, not 1/4.
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m -= (self.mdev4 >> 2) as i64;
            }
            self.mdev4 = (self.mdev4 as i64 + m) as u64; // mdev = 3/4 mdev + 1/4 |err|
            if self.mdev4 > self.mdev_max {
                self.mdev_max = self.mdev4;
                if self.mdev_max > self.rttvar {
                    self.rttvar = self.mdev_max;
                }
            }
            if snd_una > self.rtt_seq {
                if self.mdev_max < self.rttvar {
                    self.rttvar -= (self.rttvar - self.mdev_max) >> 2;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max = self.min_rto_ns;
            }
        } else {
            self.srtt8 = (m as u64) << 3;
            self.mdev4 = (m as u64) << 1; // makes rto = 3 x rtt
            self.rttvar = self.mdev4.max(self.min_rto_ns);
            self.mdev_max = self.rttvar;
            self.rtt_seq = snd_nxt;
        }
        self.srtt8 = self.srtt8.max(1);
        self.min_rtt_ns = self.min_rtt_ns.min(m as u64);
    }

    /// Smoothed RTT, 0 before the first sample.
    pub fn srtt_ns(&self) -> u64 {
        self.srtt8 >> 3
    }

    /// Smoothed RTT scaled by 8, as Linux keeps `srtt_us` (0 before the first sample).
    pub fn srtt_x8_ns(&self) -> u64 {
        self.srtt8
    }

    /// Minimum RTT seen (u64::MAX before the first sample).
    pub fn min_rtt_ns(&self) -> u64 {
        self.min_rtt_ns
    }

    pub fn latest_ns(&self) -> u64 {
        self.latest_ns
    }

    /// RTO without backoff (Linux `__tcp_set_rto` + `tcp_bound_rto`).
    pub fn rto_ns(&self) -> u64 {
        if self.srtt8 == 0 {
            return RTO_INIT_NS;
        }
        ((self.srtt8 >> 3) + self.rttvar).min(RTO_MAX_NS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn first_sample_sets_rto_to_srtt_plus_max_of_2rtt_and_min_rto() {
        let mut e = RttEstimator::new(200 * MS);
        e.sample(100 * MS, 0, 10);
        assert_eq!(e.srtt_ns(), 100 * MS);
        // rttvar = max(2 x 100 ms, 200 ms) = 200 ms.
        assert_eq!(e.rto_ns(), 300 * MS);
        let mut e = RttEstimator::new(200 * MS);
        e.sample(300 * MS, 0, 10);
        assert_eq!(e.rto_ns(), 300 * MS + 600 * MS);
    }

    #[test]
    fn constant_rtt_converges_to_srtt_plus_min_rto() {
        let mut e = RttEstimator::new(200 * MS);
        let mut una = 0;
        for _ in 0..200 {
            una += 10;
            e.sample(50 * MS, una, una + 10);
        }
        assert_eq!(e.srtt_ns(), 50 * MS);
        assert_eq!(e.rto_ns(), 250 * MS);
    }

    #[test]
    fn srtt_moves_by_one_eighth_of_the_error() {
        let mut e = RttEstimator::new(200 * MS);
        e.sample(80 * MS, 0, 1);
        e.sample(160 * MS, 0, 1);
        assert_eq!(e.srtt_ns(), 90 * MS);
    }
}
