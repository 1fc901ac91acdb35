"""How many bytes a page downloads for a gradient: the module ``adlab export`` writes,
minified and gzipped, against the libraries a page would load to take it otherwise.

The goal (X3): the ``g9_graphics`` gradient module (reverse mode; f, grad and
valueAndGrad) at most 5 KB minified and gzipped, where TF.js's bundle is 269 KB and
jax-js's 80 KB. The module is minified by esbuild (the one bundled for jax-js under
js/jaxjs, ``--minify``), where it is installed, else by stripping comments and indentation
(said in the output), and gzipped at level 9.

Run: ``python benchmarks/js_export_size.py [--model g9_graphics] [--n 10]``.
"""

from __future__ import annotations

import argparse
import gzip
import re
import subprocess
import tempfile
from pathlib import Path

import adlab

ESBUILD = Path(__file__).resolve().parents[1] / "js" / "jaxjs" / "node_modules" / ".bin" / "esbuild"
GOAL = 5_000


def minified(source: str) -> tuple[str, str]:
    """(the minified module, how it was minified)."""
    if ESBUILD.exists():
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "grad.mjs"
            path.write_text(source)
            out = subprocess.run([str(ESBUILD), str(path), "--minify", "--format=esm"],
                                 check=True, capture_output=True, text=True).stdout  # fmt: skip
        return out, "esbuild --minify"
    lines = (re.sub(r"^\s+|\s*//.*$", "", line) for line in source.splitlines())
    return "\n".join(line for line in lines if line), "comments and indentation stripped"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="g9_graphics")
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--mode", default="reverse")
    args = parser.parse_args()
    source = adlab.export_js(args.model, args.mode, n=args.n)
    small, how = minified(source)
    raw = len(source.encode())
    packed = len(gzip.compress(small.encode(), compresslevel=9))
    print(f"{args.model}, mode {args.mode}, n={args.n}: module {raw:,} B, minified "
          f"({how}) {len(small.encode()):,} B, minified and gzipped {packed:,} B "
          f"(goal <= {GOAL:,} B: {'met' if packed <= GOAL else 'not met'})")  # fmt: skip


if __name__ == "__main__":
    main()
