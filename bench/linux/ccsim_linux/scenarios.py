"""The comparison's scenarios: a fixed matrix and random draws over 5-50 Mbit/s,
10-200 ms, 1-8 flows, reno/cubic/bbr, DropTail/PIE/CoDel/FQ-CoDel. Each run of a
scenario perturbs the flows' start times a little (the same on both sides of a pair) so
that the simulated side, deterministic for one input, has a spread too."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

QUEUES = {
    "droptail": '{ kind = "droptail", limit = "1bdp" }',
    "pie": '{ kind = "pie", limit = "1000pkts" }',
    "codel": '{ kind = "codel", limit = "1000pkts" }',
    "fqcodel": '{ kind = "fq_codel", limit = "1000pkts" }',
}
CCS = ("reno", "cubic", "bbr")
#: ccsim's name of the kernel's module.
CCSIM_NAME = {"reno": "newreno", "cubic": "cubic", "bbr": "bbr"}
DURATION_S, MEASURE_START_S = 12, 4


@dataclass
class Group:
    cc: str
    count: int
    rtt_ms: int
    start_s: float = 0.0


@dataclass
class Case:
    name: str
    rate_mbps: int
    queue: str
    groups: list[Group] = field(default_factory=list)

    def toml(self, run: int) -> str:
        rng = random.Random(f"{self.name}/{run}")
        lines = [
            f"# {self.name}, run {run} (bench/linux: ccsim vs the Linux kernel)",
            f'duration = "{DURATION_S}s"',
            f"seed = {run + 1}",
            f'measure = {{ start = "{MEASURE_START_S}s" }}',
            "",
            "[bottleneck]",
            f'rate = "{self.rate_mbps}Mbps"',
            f"queue = {QUEUES[self.queue]}",
        ]
        for gi, g in enumerate(self.groups):
            for k in range(g.count):
                # One [[flows]] per flow: each gets its own jittered start.
                start = g.start_s + rng.uniform(0, 0.1)
                lines += [
                    "",
                    "[[flows]]",
                    f'name = "g{gi} {g.cc} {g.rtt_ms}ms"'
                    if k == 0
                    else f'name = "g{gi} {g.cc} {g.rtt_ms}ms #{k}"',
                    f'cc = "{CCSIM_NAME[g.cc]}"',
                    f'rtt = "{g.rtt_ms}ms"',
                    f'start = "{start * 1000:.1f}ms"',
                ]
        return "\n".join(lines) + "\n"

    def group_of_flow(self) -> list[int]:
        return [gi for gi, g in enumerate(self.groups) for _ in range(g.count)]

    def describe(self) -> str:
        gs = " + ".join(f"{g.count}x {g.cc} {g.rtt_ms} ms" for g in self.groups)
        return f"{self.rate_mbps} Mbit/s {self.queue}, {gs}"


def matrix() -> list[Case]:
    c = Case
    g = Group
    return [
        c("reno-droptail-10M-50ms", 10, "droptail", [g("reno", 1, 50)]),
        c("cubic-droptail-20M-40ms", 20, "droptail", [g("cubic", 1, 40)]),
        c("bbr-droptail-20M-40ms", 20, "droptail", [g("bbr", 1, 40)]),
        c("cubic-droptail-5M-200ms", 5, "droptail", [g("cubic", 1, 200)]),
        c("reno-droptail-50M-10ms-8", 50, "droptail", [g("reno", 8, 10)]),
        c("reno-pie-10M-50ms-4", 10, "pie", [g("reno", 4, 50)]),
        c("cubic-pie-20M-20ms-2", 20, "pie", [g("cubic", 2, 20)]),
        c("bbr-pie-10M-100ms-2", 10, "pie", [g("bbr", 2, 100)]),
        c("reno-codel-20M-20ms-2", 20, "codel", [g("reno", 2, 20)]),
        c("cubic-codel-10M-100ms-4", 10, "codel", [g("cubic", 4, 100)]),
        c("bbr-codel-30M-10ms", 30, "codel", [g("bbr", 1, 10)]),
        c("reno-fqcodel-10M-50ms-4", 10, "fqcodel", [g("reno", 4, 50)]),
        c("cubic-fqcodel-40M-20ms-8", 40, "fqcodel", [g("cubic", 8, 20)]),
        c("bbr-fqcodel-20M-50ms-2", 20, "fqcodel", [g("bbr", 2, 50)]),
        c("reno-vs-cubic-droptail-20M-40ms", 20, "droptail", [g("reno", 1, 40), g("cubic", 1, 40)]),
        c("cubic-vs-bbr-fqcodel-20M-40ms", 20, "fqcodel", [g("cubic", 1, 40), g("bbr", 1, 40)]),
    ]


def random_draws(n: int, seed: int = 35) -> list[Case]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        rate = rng.randint(5, 50)
        queue = rng.choice(sorted(QUEUES))
        n_groups = rng.choice((1, 1, 2))
        groups = []
        left = rng.randint(n_groups, 8)
        for k in range(n_groups):
            count = left if k == n_groups - 1 else rng.randint(1, left - (n_groups - 1 - k))
            left -= count
            rtt = round(10 * (20 ** rng.random()))  # log-uniform 10-200 ms
            groups.append(Group(rng.choice(CCS), count, rtt))
        out.append(Case(f"random-{i:02d}", rate, queue, groups))
    return out
