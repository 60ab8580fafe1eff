"""The multimodal release lands its media as the bytes LOFT sends, each known by its sha256;
input LOFT could not send stops the load with the file and row that name it."""

from __future__ import annotations

import hashlib
import io
import json
import os
import wave
from pathlib import Path

import pytest
from PIL import Image

from loft_warehouse.errors import BadInputError
from loft_warehouse.sources import loft_mm
from tests import mm_release


def _folder(tmp_path: Path, dataset: str) -> Path:
    mm_release.write_release(tmp_path, datasets=(dataset,))
    return tmp_path / "loft" / "mm" / dataset / "32k"


def _rewrite(path: Path, row: int, change) -> None:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    change(records[row - 1])
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def test_images_land_as_loft_sends_them_512x512_jpeg_with_both_hashes(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "flickr30k")
    data = loft_mm.load(folder)
    first = data.media[data.source.documents[0].media[0]]
    source = (folder / "resources" / "flickr30k-000.png").read_bytes()
    assert first.mime_type == "image/jpeg" and first.source_file.endswith("flickr30k-000.png")
    assert first.sha256 == hashlib.sha256(first.data).hexdigest()
    assert first.source_sha256 == hashlib.sha256(source).hexdigest()
    assert (first.width, first.height) == (40, 30)
    with Image.open(io.BytesIO(first.data)) as sent:
        assert (sent.format, sent.size) == ("JPEG", (512, 512))
    assert len(data.media) == 6 and all(len(doc.media) == 1 for doc in data.source.documents)


def test_a_video_is_its_frames_in_order(tmp_path: Path) -> None:
    data = loft_mm.load(_folder(tmp_path, "msrvtt"))
    doc = data.source.documents[2]
    assert [Path(data.media[h].source_file).name for h in doc.media] == ["frame_0.png", "frame_1.png", "frame_2.png"]
    assert len(set(doc.media)) == 3


def test_audio_is_sent_as_is_where_loft_sends_it(tmp_path: Path) -> None:
    tts = loft_mm.load(_folder(tmp_path / "a", "fleurs_en_tts"))
    audio = tts.media[tts.source.documents[0].media[0]]
    assert audio.mime_type == "audio/wav" and audio.data == Path(audio.source_file).read_bytes()
    assert audio.duration_ms == 200 and audio.sha256 == audio.source_sha256
    stt = loft_mm.load(_folder(tmp_path / "b", "fleurs_en_stt"))
    query = next(q for q in stt.source.queries if q.release_split == "test")
    assert query.turns == [""] and [stt.media[h].mime_type for h in query.media] == ["audio/wav"]
    assert all(doc.media == () and doc.text for doc in stt.source.documents)


def test_a_query_with_text_leaves_its_audio_unsent_as_loft_does(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "fleurs_en_stt")
    _rewrite(folder / "test_queries.jsonl", 1, lambda r: r.update(query_text="spoken words"))
    query = next(q for q in loft_mm.load(folder).source.queries if q.qid == "test-3")
    assert query.media == () and query.turns == ["spoken words"]


def test_the_same_bytes_land_once(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "flickr30k")
    _rewrite(folder / "corpus.jsonl", 3, lambda r: r["metadata"].update(img_path=["flickr30k-000.png"]))
    data = loft_mm.load(folder)
    assert data.source.documents[2].media == data.source.documents[0].media and len(data.media) == 5


def _set(field: str, value) -> object:
    return lambda record: record["metadata"].update({field: value})


def test_an_image_too_large_to_decode_safely_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _folder(tmp_path, "flickr30k")
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100)  # 40x30 is then over twice the limit: a bomb
    with pytest.raises(BadInputError, match=r"corpus.jsonl:1: .*flickr30k-000.png: image cannot be sent as JPEG"):
        loft_mm.load(folder)


def _garbage(folder: Path) -> None:
    (folder / "resources" / "flickr30k-002.png").write_bytes(b"not an image at all")


def _rgba(folder: Path) -> None:
    Image.new("RGBA", (8, 8)).save(folder / "resources" / "flickr30k-002.png")


# (dataset, file, row, a change to that row or to the media, what the one line says)
BAD_INPUTS = {
    "missing": ("flickr30k", "corpus.jsonl", 3, _set("img_path", ["gone.png"]), "gone.png: cannot read media file"),
    "unreadable": ("flickr30k", "corpus.jsonl", 3, _garbage, "not an image Pillow can read"),
    "rgba": ("flickr30k", "corpus.jsonl", 3, _rgba, "cannot be sent as JPEG as LOFT sends it"),
    "path-not-list": ("flickr30k", "corpus.jsonl", 3, _set("img_path", "x.png"), "img_path must be a non-empty list"),
    "not-wav": ("fleurs_en_tts", "corpus.jsonl", 2, _set("audio_path", "../corpus.jsonl"), "not a WAV file"),
    "two-images": (
        "oven",
        "test_queries.jsonl",
        2,
        _set("img_path", ["query-4.png"] * 2),
        "one img_path (LOFT), got 2",
    ),
    "unknown-gold": (
        "oven",
        "test_queries.jsonl",
        1,
        lambda r: r.update(answers=[["oven-9", 1]]),
        "not in the corpus: ['oven-9']",
    ),
    "empty-query": ("fleurs_en_stt", "dev_queries.jsonl", 1, lambda r: r["metadata"].clear(), "no query text and no"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_media_input_is_one_line_naming_file_and_row(tmp_path: Path, case: str) -> None:
    dataset, file, row, change, expected = BAD_INPUTS[case]
    folder = _folder(tmp_path, dataset)
    if change in (_garbage, _rgba):
        change(folder)
    else:
        _rewrite(folder / file, row, change)
    with pytest.raises(BadInputError) as caught:
        loft_mm.load(folder)
    message = str(caught.value)
    assert message.startswith(f"{folder / file}:{row}: ") and expected in message and "\n" not in message


def test_a_relative_path_needs_the_resources_folder(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "flickr30k")
    (folder / "resources").rename(folder / "media")
    with pytest.raises(BadInputError, match=r"corpus.jsonl:1: flickr30k-000.png: a relative media path needs"):
        loft_mm.load(folder)
    _rewrite(folder / "corpus.jsonl", 1, _set("img_path", [str(folder / "media" / "flickr30k-000.png")]))
    with pytest.raises(BadInputError, match=r"corpus.jsonl:2: "):
        loft_mm.load(folder)


def _outside_image(tmp_path: Path) -> Path:
    outside = tmp_path / "not-data" / "secret.png"
    outside.parent.mkdir()
    Image.new("RGB", (8, 8)).save(outside)
    return outside


@pytest.mark.parametrize("how", ["dot-dot", "absolute", "symlink"])
def test_a_media_path_leading_outside_the_data_folder_is_refused(tmp_path: Path, how: str) -> None:
    """Issue 60 item 3: `../`, an absolute path and a symlink each had a file from outside the
    data folder stored and sent."""
    root = tmp_path / "data"
    folder = _folder(root, "flickr30k")
    outside = _outside_image(tmp_path)
    name = {"dot-dot": "../../../../../../not-data/secret.png", "absolute": str(outside), "symlink": "link.png"}[how]
    (folder / "resources" / "link.png").symlink_to(outside)
    _rewrite(folder / "corpus.jsonl", 2, _set("img_path", [name]))
    with pytest.raises(BadInputError, match=r"corpus.jsonl:2: .*: media path leads outside the data folder") as caught:
        loft_mm.load(folder, root=root)
    assert "\n" not in str(caught.value)


def test_a_symlink_inside_the_data_folder_is_followed(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "flickr30k")
    (folder / "resources" / "link.png").symlink_to(folder / "resources" / "flickr30k-000.png")
    _rewrite(folder / "corpus.jsonl", 2, _set("img_path", ["link.png"]))
    data = loft_mm.load(folder, root=tmp_path)
    assert data.source.documents[1].media == data.source.documents[0].media


def test_a_fifo_or_device_is_refused_at_once(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "flickr30k")
    os.mkfifo(folder / "resources" / "pipe.png")  # opened for reading, it waited for a writer forever
    _rewrite(folder / "corpus.jsonl", 2, _set("img_path", ["pipe.png"]))
    with pytest.raises(BadInputError, match=r"corpus.jsonl:2: .*pipe.png: not a regular file"):
        loft_mm.load(folder)
    _rewrite(folder / "corpus.jsonl", 2, _set("img_path", ["/dev/zero"]))
    with pytest.raises(BadInputError, match=r"corpus.jsonl:2: /dev/zero: media path leads outside"):
        loft_mm.load(folder)
    with pytest.raises(BadInputError, match=r"corpus.jsonl:2: /dev/zero: not a regular file"):
        loft_mm.load(folder, root=Path("/"))  # a data folder holding a device: 4 GiB read in 21 s


def test_a_media_file_past_the_cap_is_refused_while_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _folder(tmp_path, "flickr30k")
    size = (folder / "resources" / "flickr30k-000.png").stat().st_size
    monkeypatch.setenv("LOFT_MAX_MEDIA_BYTES", str(size - 1))
    with pytest.raises(BadInputError, match=rf"corpus.jsonl:1: .*flickr30k-000.png: media file larger than {size - 1}"):
        loft_mm.load(folder)
    largest = max(path.stat().st_size for path in (folder / "resources").iterdir())
    monkeypatch.setenv("LOFT_MAX_MEDIA_BYTES", str(max(size, largest)))
    assert loft_mm.load(folder).source.documents[0].media


def test_a_wav_is_priced_by_the_samples_it_holds_not_its_header(tmp_path: Path) -> None:
    """A header declaring 0.2 s before 2 s of samples was priced at 0.2 s (issue 60 item 3)."""
    folder = _folder(tmp_path, "fleurs_en_tts")
    wav = (
        folder
        / "resources"
        / json.loads((folder / "corpus.jsonl").read_text().splitlines()[0])["metadata"]["audio_path"]
    )
    with wave.open(str(wav)) as audio:
        rate, frame_bytes = audio.getframerate(), audio.getsampwidth() * audio.getnchannels()
    wav.write_bytes(wav.read_bytes() + b"\0" * (rate * frame_bytes * 18 // 10))  # 1.8 s beyond the header's count
    data = loft_mm.load(folder)
    assert data.media[data.source.documents[0].media[0]].duration_ms == 2000
