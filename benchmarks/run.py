"""Run every benchmark: each compares an optzoo routine with its peer library on identical inputs,
in one process, and reports the time ratio (ours / peer; below 1 means we are faster).

Each ``benchmarks/bench_*.py`` defines ``BENCHMARKS``: callables returning
``{"name", "method", "peer", "method_s", "peer_s"}``.  Results go to stdout as a table and to
``runs/bench.json``.

A row may carry ``target_ratio`` (a speed requirement from an issue); the table says whether
it is met.  A row measuring something other than time (e.g. peak memory in ``method_s`` /
``peer_s``) gives ``display = (scale, unit)`` for the table.

Usage: ``make bench`` or ``python benchmarks/run.py [substring ...]``.
"""

from __future__ import annotations

import importlib.util
import json
import platform
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _target(row: dict) -> str:
    """Some benchmarks carry a target ratio (an issue's speed requirement): say if it is met."""
    if "target_ratio" not in row:
        return ""
    met = row["ratio"] <= row["target_ratio"]
    return f"   target <= {row['target_ratio']:g}: {'met' if met else 'MISSED'}"


def main(argv: list[str]) -> int:
    rows = []
    for path in sorted(HERE.glob("bench_*.py")):
        for fn in _load(path).BENCHMARKS:
            if argv and not any(a in f"{path.stem}.{fn.__name__}" for a in argv):
                continue
            row = fn()
            row["ratio"] = row["method_s"] / row["peer_s"]
            row["file"] = path.name
            rows.append(row)
            # rows measuring something other than time name a display scale and unit
            scale, unit = row.get("display", (1e3, "ms"))
            print(f"{row['name']:<44} {row['method']:<28} {row['method_s']*scale:9.2f} {unit}   "
                  f"{row['peer']:<30} {row['peer_s']*scale:9.2f} {unit}   "
                  f"ratio {row['ratio']:.3g}" + _target(row), flush=True)
    targeted = [r for r in rows if "target_ratio" in r]
    missed = [r["name"] for r in targeted if not r["ratio"] <= r["target_ratio"]]
    if targeted:
        print(f"targets: {len(targeted) - len(missed)} met, {len(missed)} MISSED"
              + (f" ({', '.join(missed)})" if missed else ""))
    out = Path("runs") / "bench.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"python": sys.version.split()[0], "machine": platform.machine(),
                               "benchmarks": rows}, indent=2) + "\n")
    print(f"{len(rows)} benchmarks -> {out}")
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
