//! The Reno building blocks every Linux congestion module reuses
//! (Linux `net/ipv4/tcp_cong.c`: `tcp_slow_start`, `tcp_cong_avoid_ai`,
//! `tcp_reno_ssthresh`, `tcp_reno_undo_cwnd`).

use super::CcState;

/// Linux `tcp_slow_start()`: exact packet counting up to ssthresh. Returns the ACKed
/// packets left over for congestion avoidance in the same ACK.
#[inline]
pub fn slow_start(tp: &mut CcState, acked: u32) -> u32 {
    let cwnd = tp.cwnd.saturating_add(acked).min(tp.ssthresh);
    let leftover = acked - (cwnd - tp.cwnd);
    tp.cwnd = cwnd.min(tp.cwnd_clamp);
    leftover
}

/// Linux `tcp_cong_avoid_ai()`: cwnd grows by one packet per `w` packets ACKed.
#[inline]
pub fn cong_avoid_ai(tp: &mut CcState, w: u32, acked: u32) {
    let w = w.max(1);
    // If credits accumulated at a higher w, apply them gently now.
    if tp.cwnd_cnt >= w {
        tp.cwnd_cnt = 0;
        tp.cwnd += 1;
    }
    tp.cwnd_cnt += acked;
    if tp.cwnd_cnt >= w {
        let delta = tp.cwnd_cnt / w;
        tp.cwnd_cnt -= delta * w;
        tp.cwnd += delta;
    }
    tp.cwnd = tp.cwnd.min(tp.cwnd_clamp);
}

/// Linux `tcp_reno_cong_avoid()`.
#[inline]
pub fn cong_avoid(tp: &mut CcState, acked: u32) {
    if !tp.is_cwnd_limited {
        return;
    }
    let mut acked = acked;
    if tp.in_slow_start() {
        acked = slow_start(tp, acked);
        if acked == 0 {
            return;
        }
    }
    let w = tp.cwnd;
    cong_avoid_ai(tp, w, acked);
}

/// Linux `tcp_reno_undo_cwnd()`.
pub fn undo_cwnd(tp: &CcState) -> u32 {
    tp.cwnd.max(tp.prior_cwnd)
}
