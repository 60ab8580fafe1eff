"""Where multimodal media should live: as BLOBs in the DuckDB warehouse, or as content-addressed
files beside it with only the hash in the table. Prints, per item count, the bytes on disk per
item (and the overhead over the media's own bytes), the time to write them all, to read one by
its hash, and to read them all back, for both layouts.

The items are 512x512 JPEG images, what LOFT sends for every image (smooth gradients with noise,
so they compress like photographs rather than like flat test shapes), each distinct.

    .venv/bin/python benchmarks/media_storage.py --items 500 2000
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
from PIL import Image


def _images(n: int, seed: int = 0) -> list[bytes]:
    rng = np.random.default_rng(seed)
    ramp = np.linspace(0, 255, 512, dtype=np.float32)
    out = []
    for _ in range(n):
        base = np.stack([np.add.outer(ramp * rng.uniform(0.2, 1), ramp * rng.uniform(0.2, 1)) / 2] * 3, axis=-1)
        noisy = np.clip(base + rng.normal(0, 12, base.shape), 0, 255).astype(np.uint8)
        buffer = io.BytesIO()
        Image.fromarray(noisy).save(buffer, format="JPEG")
        out.append(buffer.getvalue())
    return out


def _blobs(items: list[bytes], hashes: list[str], folder: Path) -> dict[str, float]:
    path = folder / "media.duckdb"
    table = pa.table({"sha256": hashes, "data": pa.array(items, pa.binary())})
    started = time.perf_counter()
    with duckdb.connect(str(path)) as con:
        con.register("landed", table)
        con.execute("create table media as select * from landed")
        con.execute("checkpoint")
    written = time.perf_counter() - started
    with duckdb.connect(str(path), read_only=True) as con:
        started = time.perf_counter()
        one = con.execute("select data from media where sha256 = ?", [hashes[len(hashes) // 2]]).fetchone()
        read_one = time.perf_counter() - started
        started = time.perf_counter()
        total = con.execute("select sum(octet_length(data)) from media").fetchone()
        read_all = time.perf_counter() - started
    assert one is not None and total is not None and total[0] == sum(map(len, items))
    return {"disk": path.stat().st_size, "write": written, "read_one": read_one, "read_all": read_all}


def _files(items: list[bytes], hashes: list[str], folder: Path) -> dict[str, float]:
    root = folder / "media"
    started = time.perf_counter()
    for data, digest in zip(items, hashes, strict=True):
        target = root / digest[:2] / f"{digest}.jpg"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    written = time.perf_counter() - started
    started = time.perf_counter()
    middle = hashes[len(hashes) // 2]
    (root / middle[:2] / f"{middle}.jpg").read_bytes()
    read_one = time.perf_counter() - started
    started = time.perf_counter()
    total = sum(len(p.read_bytes()) for p in root.rglob("*.jpg"))
    read_all = time.perf_counter() - started
    assert total == sum(map(len, items))
    disk = sum(os.stat(p).st_blocks * 512 for p in root.rglob("*"))
    return {"disk": disk, "write": written, "read_one": read_one, "read_all": read_all}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, nargs="+", default=[500, 2000])
    args = parser.parse_args()
    print("| items | layout | media MiB | bytes on disk / item | overhead | write s | read one ms | read all s |")
    print("|---|---|---|---|---|---|---|---|")
    for n in args.items:
        items = _images(n)
        hashes = [hashlib.sha256(data).hexdigest() for data in items]
        raw = sum(map(len, items))
        for layout, store in (("DuckDB BLOB", _blobs), ("files by hash", _files)):
            with tempfile.TemporaryDirectory() as folder:
                found = store(items, hashes, Path(folder))
            print(
                f"| {n} | {layout} | {raw / 2**20:.1f} | {found['disk'] / n:,.0f} | "
                f"{found['disk'] / raw - 1:+.1%} | {found['write']:.2f} | {found['read_one'] * 1000:.1f} | "
                f"{found['read_all']:.2f} |"
            )


if __name__ == "__main__":
    main()
