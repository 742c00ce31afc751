"""ccsim vs the Linux kernel: the same scenarios simulated by ccsim and emulated with the
kernel's TCP through ccsim's own bottleneck (``ccsim emulate``), compared under the
statistical rule of ``bench/ns3/ccsim_ns3/agreement.py``; writes ``bench/LINUX.md``.
Run with ``python bench/compare_linux.py`` (root needed for the emulated side)."""
