//! Building a run's tables hears a cancellation between row batches (issue 33: SIGINT
//! took 36.6 s to act while 19 M rows of `queue_events` became tables). Run with
//! `cargo test --release --test cancel_results`.

use std::time::Duration;

use ccsim_core::api;
use ccsim_core::results::{Cancelled, Column, RowBatches, Table, CANCEL_CHECK_ROWS};
use ccsim_core::sim::{self, World};

/// 64-byte UDP at 1 Gbit/s into 10 Mbit/s: about 2 M drops a second, each a
/// `queue_events` row; PIE's state after every update, and a traced TCP flow's RTTs.
const TRACED: &str = r#"
duration = "0.3s"
[bottleneck]
rate = "10Mbps"
queue = { kind = "pie", tupdate = "100us" }
[[udp]]
rate = "1Gbps"
packet_size = "64B"
rtt = "10ms"
access_rate = "10Gbps"
[[flows]]
rtt = "20ms"
trace = true
[trace]
queue_events = true
qdisc_state = "updates"
rtt_samples = true
"#;

fn finished_world() -> World {
    let sc = api::parse(TRACED, "toml").expect("valid scenario");
    let mut world = sim::build(&sc).expect("builds");
    world.run_until_end(None);
    world
}

/// Equal names, columns and values, floats bit for bit (NaN is a value here).
fn same_tables(a: &[Table], b: &[Table]) -> bool {
    let same_column = |x: &Column, y: &Column| match (x, y) {
        (Column::F64(x), Column::F64(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits())
        }
        _ => x == y,
    };
    a.len() == b.len()
        && a.iter().zip(b).all(|(s, t)| {
            s.name == t.name
                && s.columns.len() == t.columns.len()
                && s.columns
                    .iter()
                    .zip(&t.columns)
                    .all(|((n, x), (m, y))| n == m && same_column(x, y))
        })
}

/// Every cell counted towards a batch: the sum over tables of rows x columns.
fn cells(world: &World) -> (usize, usize) {
    let out = world.finish(0.0);
    let events = out
        .tables
        .iter()
        .find(|t| t.name == "queue_events")
        .expect("queue_events")
        .num_rows();
    (
        events,
        out.tables
            .iter()
            .map(|t| t.num_rows() * t.columns.len())
            .sum(),
    )
}

#[test]
fn batches_that_never_stop_build_the_same_output_asking_at_every_batch() {
    let world = finished_world();
    let (events, cells) = cells(&world);
    assert!(events > 4 * CANCEL_CHECK_ROWS, "{events} queue_events rows");
    let mut asked = 0usize;
    let mut stop = || {
        asked += 1;
        false
    };
    let batched = world
        .finish_in_batches(
            0.0,
            &mut RowBatches::asking_every(&mut stop, Duration::ZERO),
        )
        .expect("not stopped");
    let plain = world.finish(0.0);
    assert!(same_tables(&batched.tables, &plain.tables));
    assert_eq!(batched.summary.events, plain.summary.events);
    // Asked once per batch of rows built: at least once per CANCEL_CHECK_ROWS cells of
    // every table (a trace whose columns were built in one piece would not be counted)
    // and not much more (the per-flow tables and the summary count a few more).
    assert!(
        asked >= cells / CANCEL_CHECK_ROWS,
        "{asked} asks for {cells} cells"
    );
    assert!(
        asked <= cells / CANCEL_CHECK_ROWS + 64,
        "{asked} asks for {cells} cells"
    );
}

#[test]
fn a_stop_ends_table_building_at_once_with_cancelled() {
    let world = finished_world();
    let mut asked = 0usize;
    let mut stop = || {
        asked += 1;
        asked == 3
    };
    let outcome = world.finish_in_batches(
        0.0,
        &mut RowBatches::asking_every(&mut stop, Duration::ZERO),
    );
    assert_eq!(outcome.err(), Some(Cancelled));
    assert_eq!(asked, 3, "no ask after the one that stopped");
    // the world is untouched: its results can still be built
    assert!(world.finish(0.0).summary.events > 0);
}

#[test]
fn the_stop_flag_is_asked_at_most_every_cancel_check_wall() {
    let world = finished_world();
    let mut asked = 0usize;
    let mut stop = || {
        asked += 1;
        false
    };
    // an hour between asks: only the clock is looked at
    world
        .finish_in_batches(
            0.0,
            &mut RowBatches::asking_every(&mut stop, Duration::from_secs(3600)),
        )
        .expect("not stopped");
    assert_eq!(asked, 0);
}
