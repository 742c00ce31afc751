//! Every flow's routes, as the datapath reads them: the link lists of all routes
//! flattened into one array (one allocation, walked by index per hop).

use super::link::Next;

/// All routes' links, flattened; route `r` is `links[start[r]..start[r + 1]]`. A flow
/// `f`'s forward route is `2f`, its reverse (ACK) route `2f + 1`.
#[derive(Debug, Default)]
pub struct Routes {
    links: Vec<u32>,
    start: Vec<u32>,
}

impl Routes {
    /// Routes from their link lists, in route order.
    pub fn from_lists(routes: &[Vec<u32>]) -> Self {
        let mut start = Vec::with_capacity(routes.len() + 1);
        let mut acc = 0u32;
        start.push(0);
        for r in routes {
            acc += r.len() as u32;
            start.push(acc);
        }
        Routes {
            links: routes.concat(),
            start,
        }
    }

    /// The first link of route `route`.
    #[inline]
    pub fn first_link(&self, route: u32) -> u32 {
        self.links[self.start[route as usize] as usize]
    }

    /// Where a packet of flow `flow` on route `route` goes after the link at hop `hop`:
    /// the route's next link, or the flow's endpoint after its last.
    #[inline]
    pub fn next_after(&self, route: u32, hop: u16, flow: u32) -> Next {
        let start = self.start[route as usize] as usize;
        let end = self.start[route as usize + 1] as usize;
        let at = start + hop as usize + 1;
        if at < end {
            Next(self.links[at])
        } else {
            Next(Next::ENDPOINT | flow)
        }
    }
}
