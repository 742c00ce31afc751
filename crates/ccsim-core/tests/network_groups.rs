//! Issue 30: flow groups spread over several hosts (`from` / `to` lists, ranges like
//! `host[16-31]`, `pairing = "permutation"`), as incast and permutation studies write
//! them. References: the round-robin rule as documented (flow `k` from `from[k % n]` to
//! `to[k % m]`), and for the permutation the combinatorics of derangements (a uniformly
//! random derangement of 4 hosts is each of the !4 = 9 derangements with probability
//! 1/9; Knuth, TAOCP vol. 1, §1.3.3).

use std::collections::{HashMap, HashSet};

use ccsim_core::api;
use ccsim_core::results::RunOutput;

fn run(text: &str) -> RunOutput {
    let sc = api::parse(text, "toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
    api::run(&sc, None).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// A small fabric (2 spines, 2 leaves of 4 hosts) and `flows`.
fn fabric(seed: u64, flows: &str) -> String {
    format!(
        "duration = \"20ms\"\nseed = {seed}\n[network]\nkind = \"leaf_spine\"\nspines = 2\n\
         leaves = 2\nhosts_per_leaf = 4\nhost_link = {{ rate = \"1Gbps\", delay = \"2us\" }}\n\
         fabric_link = {{ rate = \"1Gbps\", delay = \"2us\" }}\n{flows}"
    )
}

/// Each flow's (first, last) node of its route.
fn ends(out: &RunOutput) -> Vec<(String, String)> {
    let paths = out.summary.paths.as_ref().expect("paths");
    paths
        .iter()
        .map(|p| (p[0].clone(), p[p.len() - 1].clone()))
        .collect()
}

#[test]
fn a_list_spreads_the_groups_flows_round_robin() {
    let out = run(&fabric(
        1,
        "[[flows]]\nfrom = [\"host[5-6]\", \"host1\"]\nto = \"host0\"\ncount = 7\n\
         rtt = \"100us\"\nsize = \"20KB\"\n",
    ));
    let hosts = ["host5", "host6", "host1"];
    let want: Vec<(String, String)> = (0..7)
        .map(|k| (hosts[k % 3].to_owned(), "host0".to_owned()))
        .collect();
    assert_eq!(ends(&out), want);
    // Without a count, one flow per host named (the longer list).
    let out = run(&fabric(
        1,
        "[[flows]]\nfrom = \"host[4-7]\"\nto = [\"host0\", \"host1\"]\nrtt = \"100us\"\n\
         size = \"20KB\"\n",
    ));
    let got = ends(&out);
    let want: Vec<(String, String)> = (0..4)
        .map(|k| (format!("host{}", 4 + k), format!("host{}", k % 2)))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn a_one_host_list_is_the_one_host_written_plainly() {
    let plain = "[[flows]]\nfrom = \"host1\"\nto = \"host6\"\ncount = 2\nrtt = \"100us\"\n";
    let listed =
        "[[flows]]\nfrom = [\"host1\"]\nto = [\"host[6-6]\"]\ncount = 2\nrtt = \"100us\"\n";
    let (a, b) = (run(&fabric(4, plain)), run(&fabric(4, listed)));
    // Compared as printed: an idle link's sojourn is NaN, never equal to itself.
    let printed = |o: &RunOutput| format!("{:?} {:?}", o.summary.flows, o.summary.links);
    assert_eq!(printed(&a), printed(&b));
}

/// The derangement a permutation group over `hosts` hosts drew with `seed`.
fn drawn(seed: u64, hosts: u32) -> Vec<usize> {
    let text = fabric(
        seed,
        &format!(
            "[[flows]]\nfrom = \"host[0-{}]\"\npairing = \"permutation\"\nrtt = \"100us\"\n",
            hosts - 1
        ),
    );
    let sc = api::parse(&text, "toml").expect("parses");
    let e = sc.flows[0].endpoints.as_ref().expect("hosts");
    assert!(e.permutation);
    assert_eq!(sc.flows[0].count, hosts);
    e.to.iter()
        .map(|h| h[4..].parse::<usize>().expect("hostN"))
        .collect()
}

#[test]
fn a_permutation_sends_from_every_host_to_one_other_and_is_uniform() {
    // Every host sends once and receives once, never to itself; the run's routes agree.
    let p = drawn(7, 8);
    let mut sorted = p.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..8).collect::<Vec<_>>());
    assert!(p.iter().enumerate().all(|(i, &j)| i != j), "{p:?}");
    let out = run(&fabric(
        7,
        "[[flows]]\nfrom = \"host[0-7]\"\npairing = \"permutation\"\nrtt = \"100us\"\n\
         size = \"10KB\"\n",
    ));
    let want: Vec<(String, String)> = (0..8)
        .map(|i| (format!("host{i}"), format!("host{}", p[i])))
        .collect();
    assert_eq!(ends(&out), want);
    // Deterministic from the seed; another seed draws another one.
    assert_eq!(drawn(7, 8), p);
    assert!((8..20).any(|s| drawn(s, 8) != p));
    // Uniform over the 9 derangements of 4: 1800 seeds, each about 200 times (binomial
    // standard deviation 13; +-60 is over 4.5 of them).
    let mut seen: HashMap<Vec<usize>, u32> = HashMap::new();
    for seed in 0..1800 {
        *seen.entry(drawn(seed, 4)).or_default() += 1;
    }
    assert_eq!(seen.len(), 9, "{seen:?}");
    assert!(seen.values().all(|&c| (140..=260).contains(&c)), "{seen:?}");
    let distinct: HashSet<_> = seen.keys().collect();
    assert_eq!(distinct.len(), 9);
}

/// The error a scenario gets, as one line.
fn error_of(flows: &str) -> String {
    let text = fabric(1, flows);
    let err = match api::parse(&text, "toml") {
        Err(e) => e,
        Ok(sc) => api::validate(&sc).expect_err("accepted"),
    };
    let line = err.to_string();
    assert!(!line.contains('\n'), "{line}");
    line
}

#[test]
fn bad_host_lists_name_the_key_that_is_wrong() {
    let cases = [
        (
            "from = [\"host1\", \"host99\"]\nto = \"host0\"",
            "flows[0].from: no node named \"host99\"",
        ),
        ("from = []\nto = \"host0\"", "flows[0].from: expected at least one host"),
        ("from = \"host0\"\nto = []", "flows[0].to: expected at least one host"),
        (
            "from = \"host1\"\npairing = \"permutation\"",
            "flows[0].from: a permutation needs at least two hosts",
        ),
        (
            "from = [\"host1\", \"host1\"]\npairing = \"permutation\"",
            "flows[0].from: names host \"host1\" twice",
        ),
        (
            "from = \"host[0-3]\"\nto = \"host5\"\npairing = \"permutation\"",
            "flows[0].to: not with pairing = \"permutation\"",
        ),
        ("pairing = \"permutation\"", "flows[0].from: missing"),
        (
            "from = \"host[0-3]\"\nto = \"host5\"\npairing = \"random\"",
            "flows[0].pairing: expected \"round_robin\" or \"permutation\"",
        ),
        (
            "from = [\"host0\", \"host[5-3]\"]\nto = \"host6\"",
            "flows[0].from[1]: expected a range like",
        ),
        (
            "from = \"host[0-3]\"\nto = \"host0\"",
            "flows[0].to: a flow would go from \"host0\" to itself",
        ),
        (
            "from = [\"host1\", \"host2\"]\nto = \"host0\"\npath = [\"host1\", \"leaf0\", \"host0\"]",
            "flows[0].path: an explicit path joins one host to one host",
        ),
        ("from = 3\nto = \"host0\"", "flows[0].from: expected a host name"),
    ];
    for (body, want) in cases {
        let got = error_of(&format!("[[flows]]\nrtt = \"100us\"\n{body}\n"));
        assert!(got.contains(want), "got {got:?}, want {want:?}");
    }
}

/// `queue_series` of a `[network]`: a row per tick for each link that queued, named by
/// the link; its per-interval drops, marks and bytes add up to the link's own counters
/// in the summary (a separate count, kept by the link's statistics over the window).
#[test]
fn queue_series_has_every_queueing_link_and_adds_up_to_its_counters() {
    let text = "duration = \"200ms\"\nmeasure = { start = \"0s\" }\nstats_interval = \"10ms\"\n\
        [network]\nkind = \"parking_lot\"\n\
        hops = [{ rate = \"20Mbps\", delay = \"2ms\", queue = { kind = \"droptail\", limit = \"20p\" } },\n\
                { rate = \"10Mbps\", delay = \"2ms\", queue = { kind = \"red\", mode = \"step\", threshold = \"5p\", limit = \"50p\" } }]\n\
        [[flows]]\nfrom = \"r0\"\nto = \"r2\"\nrtt = \"20ms\"\n\
        [[flows]]\nfrom = \"r0\"\nto = \"r1\"\ncount = 2\nrtt = \"20ms\"\n\
        [[flows]]\nfrom = \"r1\"\nto = \"r2\"\ncc = \"dctcp\"\necn = true\nrtt = \"20ms\"\n";
    let out = run(text);
    let table = out
        .tables
        .iter()
        .find(|t| t.name == "queue_series")
        .expect("queue_series");
    use ccsim_core::results::Column;
    let Some(Column::Str(names)) = table.column("queue") else {
        panic!("queue column")
    };
    let u64s = |c: &str| match table.column(c) {
        Some(Column::U64(v)) => v.clone(),
        _ => panic!("{c}"),
    };
    let (drops, marks, bytes) = (u64s("drops"), u64s("marks"), u64s("departed_bytes"));
    let ticks = 200 / 10;
    for link in out.summary.links.as_ref().expect("links") {
        let rows: Vec<usize> = (0..names.len())
            .filter(|&r| names[r] == link.name)
            .collect();
        if link.name.ends_with("-reverse") {
            continue; // ACKs: they may or may not wait behind one another
        }
        assert_eq!(rows.len(), ticks, "{}: {} rows", link.name, rows.len());
        let sum = |v: &[u64]| rows.iter().map(|&r| v[r]).sum::<u64>();
        assert_eq!(sum(&drops), link.drops, "{}", link.name);
        assert_eq!(sum(&marks), link.marks, "{}", link.name);
        assert_eq!(sum(&bytes), link.bytes_departed, "{}", link.name);
    }
    // Both hops queued (DropTail drops at hop1, RED marks DCTCP at hop2).
    assert!(names.iter().any(|n| n == "hop1") && names.iter().any(|n| n == "hop2"));
    assert!(!names.iter().any(|n| n == "bottleneck"));
}
