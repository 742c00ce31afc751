//! A lazily re-armed timer, shared by the TCP endpoints and the links' queue disciplines.

/// A timer re-armed lazily: moving the deadline later schedules nothing; the pending
/// event notices the new deadline when it fires and re-schedules itself. This keeps the
/// event queue small although Linux re-arms the RTO on nearly every ACK.
#[derive(Debug, Clone, Copy, Default)]
pub struct Timer {
    deadline: Option<u64>,
    scheduled: Option<u64>,
}

/// What to do with a timer event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerFire {
    /// A superseded event: ignore.
    Stale,
    /// The deadline moved later: schedule an event at this time.
    Reschedule(u64),
    /// Due: run the handler.
    Fire,
}

impl Timer {
    #[inline]
    pub fn arm(&mut self, at_ns: u64) {
        self.deadline = Some(at_ns);
    }
    #[inline]
    pub fn cancel(&mut self) {
        self.deadline = None;
    }
    #[inline]
    pub fn is_armed(&self) -> bool {
        self.deadline.is_some()
    }
    pub fn deadline(&self) -> Option<u64> {
        self.deadline
    }
    /// After a handler ran: the time of an event to schedule, if one is needed.
    #[inline]
    pub fn sync(&mut self) -> Option<u64> {
        let d = self.deadline?;
        match self.scheduled {
            Some(s) if s <= d => None,
            _ => {
                self.scheduled = Some(d);
                Some(d)
            }
        }
    }
    /// An event for this timer fired at `now_ns`.
    #[inline]
    pub fn on_event(&mut self, now_ns: u64) -> TimerFire {
        if self.scheduled != Some(now_ns) {
            return TimerFire::Stale;
        }
        self.scheduled = None;
        match self.deadline {
            None => TimerFire::Stale,
            Some(d) if d > now_ns => {
                self.scheduled = Some(d);
                TimerFire::Reschedule(d)
            }
            Some(_) => {
                self.deadline = None;
                TimerFire::Fire
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timer_moves_later_without_new_events() {
        let mut t = Timer::default();
        t.arm(100);
        assert_eq!(t.sync(), Some(100));
        t.arm(150);
        assert_eq!(t.sync(), None, "a later deadline reuses the pending event");
        assert_eq!(t.on_event(100), TimerFire::Reschedule(150));
        assert_eq!(t.on_event(150), TimerFire::Fire);
        assert!(!t.is_armed());
    }

    #[test]
    fn timer_moved_earlier_schedules_again_and_old_event_is_stale() {
        let mut t = Timer::default();
        t.arm(100);
        assert_eq!(t.sync(), Some(100));
        t.arm(50);
        assert_eq!(t.sync(), Some(50));
        assert_eq!(t.on_event(50), TimerFire::Fire);
        assert_eq!(t.on_event(100), TimerFire::Stale);
    }

    #[test]
    fn cancelled_timer_does_not_fire() {
        let mut t = Timer::default();
        t.arm(10);
        t.sync();
        t.cancel();
        assert_eq!(t.on_event(10), TimerFire::Stale);
    }
}
