"""Hash the Parquet tables of every example and of `ccsim reproduce all --quick`.

A refactor must leave results byte-identical (DEVELOPERS.md). Run this before the first
move to record the hashes, and after the last to compare:

    python bench/parquet_hashes.py --out /tmp/h-before.json            # record
    python bench/parquet_hashes.py --check /tmp/h-before.json          # compare

`--only examples` skips the reproductions (about a minute instead of ten). Parquet files
name the writing library's version in their metadata, so compare hashes made with the
same pyarrow (the JSON records it). A sweep store's run tables record the worker and the
wall times of each run: those columns are left out and the rows hashed in run order; every
other file is hashed byte for byte. A store's part files are cut wherever parallel runs
happened to finish, so each folder of parts is hashed as one table, rows in run order.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _ccsim(*args: str) -> None:
    cmd = [sys.executable, "-m", "ccsim", *args]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(args)}\n{done.stderr}")


def produce(work: Path, only: str) -> None:
    if only in ("all", "examples"):
        for toml in sorted((ROOT / "examples").glob("*.toml")):
            _ccsim("run", str(toml), "-o", str(work / "examples" / toml.stem), "--no-plots",
                   "--quiet")
        for toml in sorted((ROOT / "examples" / "sweeps").glob("*.toml")):
            _ccsim("sweep", str(toml), "-o", str(work / "sweeps" / toml.stem), "--quiet")
    if only in ("all", "reproduce"):
        _ccsim("reproduce", "all", "--quick", "-o", str(work / "reproduce"), "--quiet")


# A sweep store's run rows say which worker ran them, when, and for how long.
VOLATILE = ("worker", "started_at", "finished_at", "wall_s")


def _rows_digest(t) -> str:
    """A table's rows in run order (stable), without the volatile columns."""
    import pyarrow as pa

    t = t.drop_columns([c for c in VOLATILE if c in t.column_names])
    if "run" in t.column_names:
        t = t.take(pa.compute.sort_indices(t, [("run", "ascending")]))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, t.schema) as w:
        w.write_table(t.combine_chunks())
    return "rows:" + hashlib.sha256(sink.getvalue().to_pybytes()).hexdigest()


def _digest(p: Path) -> str:
    """The file's bytes; for a sweep store's table (which records wall times), its rows."""
    import pyarrow.parquet as pq

    if "wall_s" not in pq.read_schema(p).names:
        return hashlib.sha256(p.read_bytes()).hexdigest()
    return _rows_digest(pq.read_table(p))


def hashes(work: Path) -> dict[str, str]:
    """Per file; a sweep store's part files (`part-*.parquet`, split wherever the parallel
    runs happened to finish) as one table per folder."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out: dict[str, str] = {}
    parts: dict[Path, list[Path]] = {}
    for p in sorted(work.rglob("*.parquet")):
        if p.name.startswith("part-"):
            parts.setdefault(p.parent, []).append(p)
        else:
            out[str(p.relative_to(work))] = _digest(p)
    for folder, files in sorted(parts.items()):
        t = pa.concat_tables([pq.read_table(f) for f in files], promote_options="default")
        out[str(folder.relative_to(work)) + "/part-*"] = _rows_digest(t)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="write the hashes to this JSON file")
    ap.add_argument("--check", type=Path, help="compare with hashes written by --out")
    ap.add_argument("--only", choices=["all", "examples", "reproduce"], default="all")
    ap.add_argument("--work", type=Path, help="keep the outputs here (default: a temp dir)")
    a = ap.parse_args()
    import pyarrow

    with tempfile.TemporaryDirectory() as tmp:
        work = a.work or Path(tmp)
        produce(work, a.only)
        got = {"pyarrow": pyarrow.__version__, "only": a.only, "files": hashes(work)}
    if a.out:
        a.out.write_text(json.dumps(got, indent=1) + "\n")
        print(f"{len(got['files'])} Parquet files hashed -> {a.out}")
    if a.check:
        want = json.loads(a.check.read_text())
        if want["pyarrow"] != got["pyarrow"]:
            print(f"warning: pyarrow {want['pyarrow']} then, {got['pyarrow']} now",
                  file=sys.stderr)
        w = {k: v for k, v in want["files"].items()
             if a.only == "all" or k.startswith("reproduce" if a.only == "reproduce" else
                                                ("examples", "sweeps"))}
        g = got["files"]
        differ = sorted(k for k in w.keys() & g.keys() if w[k] != g[k])
        missing = sorted(w.keys() - g.keys())
        extra = sorted(g.keys() - w.keys())
        for name, lst in (("differ", differ), ("missing", missing), ("new", extra)):
            for k in lst[:20]:
                print(f"{name}: {k}")
        print(f"{len(w)} expected, {len(differ)} differ, {len(missing)} missing, "
              f"{len(extra)} new")
        return 1 if differ or missing or extra else 0
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
