"""Per-link queue tables of a `[network]` (issue 30): `qdisc_state`, `queue_events` and
`sojourn_cdf` cover every link that queued, keyed by link name, and agree with each
link's own summary figures; a dumbbell's tables keep their columns."""

from __future__ import annotations

from collections import Counter

import numpy as np

import ccsim

PARKING_LOT = """duration = "20s"
measure = { start = "0s" }
[trace]
queue_events = true
qdisc_state = "interval"
[network]
kind = "parking_lot"
hops = [
  { rate = "10Mbps", delay = "5ms", queue = { kind = "codel" } },
  { rate = "15Mbps", delay = "5ms", queue = { kind = "pie" } },
]
[[flows]]
cc = "cubic"
from = "r0"
to = "r2"
rtt = "60ms"
[[flows]]
cc = "cubic"
from = "r0"
to = "r1"
rtt = "20ms"
[[flows]]
cc = "cubic"
from = "r1"
to = "r2"
rtt = "40ms"
count = 2
"""


def test_each_link_has_its_own_rows_in_the_queue_tables() -> None:
    run = ccsim.run(PARKING_LOT)
    links = {x["name"]: x for x in run.summary["links"]}
    # qdisc_state: each hop's own discipline's variables (CoDel's on hop1, PIE's on hop2),
    # one record per stats tick (200 in 20 s).
    state = run.tables["qdisc_state"].to_pydict()
    names = {
        q: {n for qq, n in zip(state["queue"], state["name"], strict=True) if qq == q}
        for q in set(state["queue"])
    }
    assert names["hop1"] == {"count", "dropping", "ldelay_ms"}
    assert {"drop_prob", "qdelay_ms"} <= names["hop2"]
    per_name = Counter(zip(state["queue"], state["name"], strict=True))
    assert per_name[("hop1", "count")] == per_name[("hop2", "drop_prob")] == 200
    # queue_events: every drop and mark, each at its link, adding up to the link's count.
    events = run.tables["queue_events"].to_pydict()
    counted = Counter(zip(events["queue"], events["event"], strict=True))
    for name in ("hop1", "hop2"):
        assert counted[(name, "drop")] == links[name]["drops"] > 0
        assert counted[(name, "mark")] == links[name]["marks"]
    # sojourn_cdf: each link's distribution gives its summary percentiles.
    cdf = run.tables["sojourn_cdf"].to_pydict()
    queue = np.asarray(cdf["queue"])
    for name in ("hop1", "hop2"):
        x = np.asarray(cdf["sojourn_ms"])[queue == name]
        y = np.asarray(cdf["cdf"])[queue == name]
        for q, key in ((0.5, "sojourn_p50_ms"), (0.9, "sojourn_p90_ms"), (0.99, "sojourn_p99_ms")):
            assert x[np.argmax(y >= q)] == links[name][key]
    assert links["hop2"]["sojourn_p99_ms"] != links["hop1"]["sojourn_p99_ms"]


def test_a_dumbbells_queue_tables_keep_their_columns() -> None:
    text = """duration = "5s"
[trace]
queue_events = true
[bottleneck]
rate = "10Mbps"
queue = { kind = "codel" }
[[flows]]
cc = "cubic"
rtt = "20ms"
count = 2
"""
    run = ccsim.run(text)
    assert run.tables["queue_events"].column_names == [
        "time_s",
        "flow_id",
        "event",
        "qlen_pkts",
        "qlen_bytes",
        "sojourn_ms",
    ]
    assert set(run.tables["qdisc_state"].to_pydict()["queue"]) == {"bottleneck"}
    assert set(run.tables["sojourn_cdf"].to_pydict()["queue"]) == {"bottleneck"}
