"""A small multimodal LOFT release, generated: images drawn with Pillow, videos as frames, speech
stood in for by synthesised WAV tones. Same arguments, same bytes (the differential fixture under
tests/differential/prompt_data/loft/mm was written by this and is compared with it).

Layout as LOFT's loader reads it: loft/mm/{dataset}/{size}/corpus.jsonl, {split}_queries.jsonl
and resources/ with the media, paths in `metadata` relative to resources/.
"""

from __future__ import annotations

import io
import json
import math
import struct
import wave
from pathlib import Path

from PIL import Image, ImageDraw

COLOURS = ["red", "green", "blue", "orange", "purple", "teal", "gold", "navy"]
SHAPES = ["circle", "square", "triangle"]
DATASETS = ("flickr30k", "oven", "msrvtt", "fleurs_en_tts", "fleurs_en_stt")
SPLITS = {"few_shot": [0, 1], "dev": [2], "test": [3, 4]}
FRAMES = 3


def _caption(i: int) -> str:
    return f"A {COLOURS[i % len(COLOURS)]} {SHAPES[i % len(SHAPES)]} on a pale background."


def image_bytes(i: int, frame: int = 0, fmt: str = "PNG", size: tuple[int, int] = (40, 30)) -> bytes:
    """Item i's picture (frame k of a video moves the shape to the right)."""
    image = Image.new("RGB", size, (240, 240, 230))
    draw = ImageDraw.Draw(image)
    x = 4 + 6 * frame
    box = (x, 6, x + 16, 22)
    colour = COLOURS[i % len(COLOURS)]
    shape = SHAPES[i % len(SHAPES)]
    if shape == "circle":
        draw.ellipse(box, fill=colour)
    elif shape == "square":
        draw.rectangle(box, fill=colour)
    else:
        draw.polygon([(x, 22), (x + 8, 6), (x + 16, 22)], fill=colour)
    out = io.BytesIO()
    image.save(out, format=fmt)
    return out.getvalue()


def wav_bytes(i: int, seconds: float = 0.2, rate: int = 8000) -> bytes:
    """A tone per item: mono, 16-bit PCM."""
    frequency = 220.0 * (1 + i / 4)
    n = int(seconds * rate)
    samples = b"".join(struct.pack("<h", int(12000 * math.sin(2 * math.pi * frequency * t / rate))) for t in range(n))
    out = io.BytesIO()
    with wave.open(out, "wb") as audio:
        audio.setnchannels(1)
        audio.setsampwidth(2)
        audio.setframerate(rate)
        audio.writeframes(samples)
    return out.getvalue()


def _write_jsonl(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


def _dataset(folder: Path, dataset: str, n_docs: int) -> None:
    resources = folder / "resources"
    resources.mkdir(parents=True, exist_ok=True)
    corpus, media_of = [], {}
    for i in range(n_docs):
        pid = f"{dataset}-{i:03d}"
        metadata: dict = {}
        title, passage = "", ""
        if dataset in ("flickr30k", "oven"):
            name = f"{pid}.jpg" if i == 1 else f"{pid}.png"
            (resources / name).write_bytes(image_bytes(i, fmt="JPEG" if i == 1 else "PNG"))
            metadata["img_path"] = [name]
            title = f"Shape {i}" if dataset == "oven" else ""
        elif dataset == "msrvtt":
            names = [f"{pid}/frame_{k}.png" for k in range(FRAMES)]
            (resources / pid).mkdir(exist_ok=True)
            for k, name in enumerate(names):
                (resources / name).write_bytes(image_bytes(i, frame=k))
            metadata["img_path"] = names
        elif dataset.endswith("_tts"):
            name = f"{pid}.wav"
            (resources / name).write_bytes(wav_bytes(i))
            metadata["audio_path"] = name
        else:
            passage = _caption(i)
        media_of[i] = metadata
        corpus.append({"pid": pid, "title_text": title, "passage_text": passage, "metadata": metadata})
    _write_jsonl(folder / "corpus.jsonl", corpus)
    for split, items in SPLITS.items():
        queries = []
        for i in items:
            pid = f"{dataset}-{i:03d}"
            metadata = {}
            text = _caption(i)
            if dataset == "oven":
                name = f"query-{i}.png"
                (resources / name).write_bytes(image_bytes(i, size=(36, 36)))
                metadata["img_path"] = [name]
                text = f"What shape is drawn in this picture, number {i}?"
            elif dataset.endswith("_stt"):
                name = f"query-{i}.wav"
                (resources / name).write_bytes(wav_bytes(i))
                metadata["audio_path"] = [name]
                text = ""
            queries.append({"qid": f"{split}-{i}", "query_text": text, "answers": [[pid, 1]], "metadata": metadata})
        _write_jsonl(folder / f"{split}_queries.jsonl", queries)


def write_release(root: Path, datasets: tuple[str, ...] = DATASETS, size: str = "32k", n_docs: int = 6) -> Path:
    """Write loft/mm/{dataset}/{size} under root for each dataset; returns root."""
    for dataset in datasets:
        _dataset(root / "loft" / "mm" / dataset / size, dataset, n_docs)
    return root
