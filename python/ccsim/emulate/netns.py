"""Network namespaces for ``ccsim emulate``: one for the senders, one for the receivers,
each reaching the emulator through a TUN device the ccsim process owns.

:class:`Namespaces` creates them with ``ip netns add``, moves the TUN devices in, gives
them addresses and routes, sets the TCP sysctls the scenario asks for, and on
:meth:`Namespaces.close` (always called: normal exit, Ctrl-C, SIGTERM, a failed traffic
program) kills the traffic programs it started and deletes the namespaces. The TUN
devices disappear with the emulator's file descriptors.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from dataclasses import dataclass, field

#: Addresses: the senders' side and the receivers' side, each a /24 on its TUN.
SENDER_NET, RECEIVER_NET = "10.203.1", "10.203.2"
SENDER_IP, RECEIVER_IP = f"{SENDER_NET}.1", f"{RECEIVER_NET}.1"


class EmulationError(RuntimeError):
    """The emulation could not be set up or a traffic program failed (one line)."""


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise EmulationError(f"ip {' '.join(args)}: {proc.stderr.strip()}")
    return proc


@dataclass
class Namespaces:
    """The senders' and receivers' namespaces of one emulation (names carry the pid)."""

    tag: str = field(default_factory=lambda: f"ccs{os.getpid() % 100000}")
    created: list[str] = field(default_factory=list)
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def sender(self) -> str:
        return f"{self.tag}-snd"

    @property
    def receiver(self) -> str:
        return f"{self.tag}-rcv"

    @property
    def sender_tun(self) -> str:
        return f"{self.tag}s"

    @property
    def receiver_tun(self) -> str:
        return f"{self.tag}r"

    def wire(self, sysctls: dict[str, str]) -> None:
        """Create both namespaces and wire the (already created) TUN devices into them."""
        for ns, tun, mine, theirs in (
            (self.sender, self.sender_tun, SENDER_IP, RECEIVER_NET),
            (self.receiver, self.receiver_tun, RECEIVER_IP, SENDER_NET),
        ):
            ip("netns", "add", ns)
            self.created.append(ns)
            ip("link", "set", tun, "netns", ns)
            # No IPv6 (router solicitations would only be ignored by the emulator).
            self.sysctl(ns, "net.ipv6.conf.all.disable_ipv6", "1", check=False)
            ip("-n", ns, "link", "set", "lo", "up")
            ip("-n", ns, "addr", "add", f"{mine}/24", "dev", tun)
            ip("-n", ns, "link", "set", tun, "up", "mtu", "1500")
            ip("-n", ns, "route", "replace", f"{theirs}.0/24", "dev", tun)
            for key, value in sysctls.items():
                self.sysctl(ns, key, value)

    def sysctl(self, ns: str, key: str, value: str, check: bool = True) -> None:
        proc = subprocess.run(
            ["ip", "netns", "exec", ns, "sysctl", "-q", "-w", f"{key}={value}"],
            capture_output=True,
            text=True,
        )
        if check and proc.returncode != 0:
            raise EmulationError(f"sysctl {key}={value} in {ns}: {proc.stderr.strip()}")

    def spawn(self, ns: str, argv: list[str], log_path: str) -> subprocess.Popen[bytes]:
        """Start a program in namespace ``ns`` (its own session: a Ctrl-C at the terminal
        reaches ccsim, which stops it, not the program half-way)."""
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                ["ip", "netns", "exec", ns, *argv],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.procs.append(proc)
        return proc

    def close(self) -> None:
        """Stop the traffic programs and delete the namespaces; safe to call twice."""
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
        for proc in self.procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
        self.procs.clear()
        for ns in reversed(self.created):
            ip("netns", "del", ns, check=False)
        self.created.clear()
