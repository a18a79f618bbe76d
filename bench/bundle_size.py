"""Prints where the packaged app's bytes go: `python bench/bundle_size.py [dist/Timothy]`.

Run after `make dist`. Groups the one-folder bundle by its biggest parts (Qt libraries and
plugins, numpy's OpenBLAS, onnxruntime, the embedding model, ...) so a cut can be measured.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

# Folders reported one level deeper, because they hold several separately cuttable parts.
SPLIT = {("PySide6",), ("PySide6", "Qt"), ("PySide6", "Qt", "plugins"), ("botocore",)}


def part_of(relative: Path) -> str:
    parts = relative.parts
    if len(parts) == 1:  # libraries PyInstaller puts at the top: name the big ones
        big = parts[0].startswith(("libpython", "libQt6", "libicu", "base_library"))
        return parts[0] if big else "(other top-level libraries)"
    depth = 1
    while parts[:depth] in SPLIT and depth < len(parts) - 1:
        depth += 1
    return "/".join(parts[:depth])


def megabytes(size: int) -> str:
    return f"{size / 1_000_000:8.1f} MB"


def main(argv: list[str]) -> int:
    bundle = Path(argv[1] if len(argv) > 1 else "dist/Timothy")
    internal = bundle / "_internal"
    if not internal.is_dir():
        print(f"no bundle at {bundle}: run `make dist` first", file=sys.stderr)
        return 2
    sizes: Counter[str] = Counter()
    files = 0
    for path in internal.rglob("*"):
        if path.is_file() and not path.is_symlink():
            sizes[part_of(path.relative_to(internal))] += path.stat().st_size
            files += 1
    outside = sum(p.stat().st_size for p in bundle.iterdir() if p.is_file())
    total = sum(sizes.values()) + outside
    print(f"{bundle}: {megabytes(total).strip()} in {files} files")
    for name, size in sizes.most_common(25):
        print(f"{megabytes(size)}  {name}")
    rest = sum(size for _, size in sizes.most_common()[25:])
    print(f"{megabytes(rest)}  everything else")
    print(f"{megabytes(outside)}  the executables (their archives hold the Python modules)")
    for archive in sorted(bundle.parent.glob("Timothy-*")):
        print(f"{megabytes(archive.stat().st_size)}  {archive.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
