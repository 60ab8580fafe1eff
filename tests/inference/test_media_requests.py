"""Multimodal requests: every provider sends each media item where its marker stands, streamed
and in batch mode, through the real clients against the fixture (which reads a media part back
as the marker of the bytes it decodes); a provider that does not take a modality is
skipped_unsupported in one line; the request key covers the media hashes; media tokens count."""

from __future__ import annotations

import hashlib
import io
import wave

import polars as pl
import pytest
from PIL import Image

from loft_warehouse.errors import ConfigurationError
from loft_warehouse.inference import runner
from loft_warehouse.inference.cost import CostLimitError
from loft_warehouse.inference.media import MediaItem, MediaLibrary
from loft_warehouse.inference.systems import Prices
from loft_warehouse.prompts.media_markers import marker
from tests.inference.support import anthropic_system, gemini_system, openai_system, prompt_row, systems_from

PRICES = {
    "gpt-4o-2024-08-06": Prices(2.5, 1.25, 10.0, None, 0.5),
    "gemini-1.5-pro-002": Prices(1.25, 0.3125, 5.0, None, 0.5),
    "claude-3-opus-20240229": Prices(15.0, 1.5, 75.0, 18.75, 0.5),
}


def _jpeg(colour: tuple[int, int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (512, 512), colour).save(out, "JPEG")
    return out.getvalue()


def _wav(milliseconds: int) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as audio:
        audio.setnchannels(1)
        audio.setsampwidth(2)
        audio.setframerate(8000)
        audio.writeframes(b"\x01\x00" * (8 * milliseconds))
    return out.getvalue()


def _item(data: bytes, mime_type: str, duration_ms: int | None = None) -> MediaItem:
    return MediaItem(hashlib.sha256(data).hexdigest(), mime_type, data, duration_ms)


RED, GREEN, BLUE = (
    _item(_jpeg((200, 0, 0)), "image/jpeg"),
    _item(_jpeg((0, 200, 0)), "image/jpeg"),
    _item(_jpeg((0, 0, 200)), "image/jpeg"),
)
CLIP = _item(_wav(500), "audio/wav", 500)
LIBRARY = MediaLibrary([RED, GREEN, BLUE, CLIP])


def _mark(item: MediaItem) -> str:
    return marker(item.mime_type, item.sha256)


IMAGE_PREFIX = (
    "You will be given a list of images. "
    + " ".join(f"filler{i}" for i in range(60))
    + "\nID: 0\n"
    + _mark(RED)
    + "ID: 1\n"
    + _mark(GREEN)
    + "\n"
)
AUDIO_PREFIX = "You will be given audio clips.\nID: 0\n" + _mark(CLIP) + "\n"
PREFIXES = {"pimg": IMAGE_PREFIX, "paud": AUDIO_PREFIX}


def _rows() -> pl.DataFrame:
    def mm(prefix_id: str, dataset: str, qid: str, suffix: str) -> dict:
        return prompt_row(
            prefix_id, qid, suffix, task="mm", dataset=dataset, corpus_id=dataset, prompt_id=f"mm/{dataset}/{qid}/0"
        )

    return pl.DataFrame(
        [
            mm("pimg", "oven", "q-green", "====== Now let's start! ======\n" + _mark(GREEN) + "which is green?\n"),
            mm("pimg", "oven", "q-blue", "====== Now let's start! ======\n" + _mark(BLUE) + "which is blue?\n"),
            mm("paud", "fleurs_en_tts", "q-clip", "====== Now let's start! ======\nwhich clip?\n"),
        ]
    )


def _answer_if_intact(prompt: str) -> str:
    """'1' when the prompt is exactly what was sent with its media in place, else 'garbled'."""
    for prefix_id, qid, suffix in (
        ("pimg", "q-green", _rows()["suffix"][0]),
        ("pimg", "q-blue", _rows()["suffix"][1]),
        ("paud", "q-clip", _rows()["suffix"][2]),
    ):
        if prompt == PREFIXES[prefix_id] + suffix:
            return f"Final Answer: ['1'] {qid}"
    return "Final Answer: ['garbled']"


def _run(tmp_path, store, entries, lines=None):
    emit = lines.append if lines is not None else (lambda line: None)
    inputs = runner.RunInputs(prompts=_rows(), prefixes=dict(PREFIXES), media=LIBRARY)
    return runner.run(inputs, systems_from(tmp_path, entries), store, "128k", PRICES, emit=emit)


@pytest.mark.parametrize("stream", [True, False])
def test_each_provider_sends_every_media_part_intact_and_in_order(tmp_path, api_env, store, stream):
    api_env.state.answer = _answer_if_intact
    lines: list[str] = []
    frame = _run(
        tmp_path,
        store,
        [
            gemini_system(stream=stream),
            openai_system(stream=stream, context_window=100000),
            anthropic_system(stream=stream),
        ],
        lines,
    )
    by = {(r["system"], r["qid"]): r for r in frame.iter_rows(named=True)}
    for system in ("gemini-fixture", "gpt-fixture", "claude-fixture"):
        for qid in ("q-green", "q-blue"):
            assert by[(system, qid)]["status"] == "ok"
            assert by[(system, qid)]["raw_text"] == f"Final Answer: ['1'] {qid}"
    assert by[("gemini-fixture", "q-clip")]["raw_text"] == "Final Answer: ['1'] q-clip"
    # OpenAI's chat models and Claude take no audio here: one line each, no request.
    assert by[("gpt-fixture", "q-clip")]["status"] == "skipped_unsupported"
    assert by[("claude-fixture", "q-clip")]["status"] == "skipped_unsupported"
    assert "gpt-fixture: 1 multimodal prompt(s) skipped_unsupported (openai takes no audio/wav)" in lines
    assert "claude-fixture: 1 multimodal prompt(s) skipped_unsupported (anthropic takes no audio/wav)" in lines
    # Gemini cached the image prefix with its media, Claude marked it for caching.
    creates = [r for r in api_env.state.requests if r.api == "gemini_cache_create"]
    assert creates and any("inlineData" in str(r.body) or "inline_data" in str(r.body) for r in creates)
    claude = frame.filter((pl.col("system") == "claude-fixture") & (pl.col("status") == "ok"))
    assert claude["cache_write_tokens"].sum() > 0 and claude["cached_tokens"].sum() > 0


def test_batch_mode_carries_the_media(tmp_path, api_env, store):
    api_env.state.answer = _answer_if_intact
    entries = [
        openai_system("gpt-batch", mode="batch", context_window=100000),
        gemini_system("gemini-batch", mode="batch"),
        anthropic_system("claude-batch", mode="batch"),
    ]
    first = _run(tmp_path, store, entries)
    assert set(first.filter(pl.col("qid") != "q-clip")["status"]) == {"batch_pending"}
    api_env.state.complete_batches()
    landed = _run(tmp_path, store, entries)
    images = landed.filter(pl.col("qid") != "q-clip")
    assert images.height == 6
    assert set(images["status"]) == {"ok"}
    assert all(text.startswith("Final Answer: ['1']") for text in images["raw_text"])
    assert landed.filter((pl.col("system") == "gemini-batch") & (pl.col("qid") == "q-clip"))["status"][0] == "ok"


def test_a_garbled_media_part_does_not_read_as_sent(tmp_path, api_env, store):
    """The negative control: the fixture's check fails when a media item's bytes change."""
    api_env.state.answer = _answer_if_intact
    changed = MediaItem(GREEN.sha256, GREEN.mime_type, GREEN.data[:-10] + b"\x00" * 10)
    inputs = runner.RunInputs(
        prompts=_rows().head(1), prefixes=dict(PREFIXES), media=MediaLibrary([RED, changed, BLUE, CLIP])
    )
    frame = runner.run(inputs, systems_from(tmp_path, [openai_system(context_window=100000)]), store, "128k", PRICES)
    assert frame["raw_text"].to_list() == ["Final Answer: ['garbled']"]


def test_the_request_key_covers_the_media_hashes(tmp_path):
    (system,) = systems_from(tmp_path, [openai_system()])
    prefix = "ID: 0\n" + _mark(RED)
    sha = hashlib.sha256(prefix.encode()).hexdigest()
    keys = {
        runner.request_key(system, "", sha, prefix, [{"role": "user", "content": prefix + suffix}])
        for suffix in (_mark(GREEN) + "q\n", _mark(BLUE) + "q\n")
    }
    assert len(keys) == 2


def test_media_tokens_count_in_the_window_and_a_missing_item_is_named(tmp_path, api_env, store):
    # Two 512x512 images in the prefix and one in the suffix: gpt-4o counts 255 tokens each.
    lines: list[str] = []
    entries = [openai_system(context_window=110 + 3 * 255 + 32 - 1)]
    frame = _run(tmp_path, store, entries, lines)
    assert frame.filter(pl.col("qid") == "q-green")["status"][0] == "skipped_too_long"
    entries = [openai_system(context_window=110 + 3 * 255 + 32)]
    assert _run(tmp_path, store, entries).filter(pl.col("qid") == "q-green")["status"][0] == "ok"
    inputs = runner.RunInputs(prompts=_rows(), prefixes=dict(PREFIXES), media=MediaLibrary([RED, BLUE, CLIP]))
    with pytest.raises(ConfigurationError, match=f"stg_mm_media has no media item sha256:{GREEN.sha256}"):
        runner.run(inputs, systems_from(tmp_path, [gemini_system()]), store, "128k", PRICES)


def test_max_cost_usd_counts_the_media_before_any_call(tmp_path, api_env, store):
    """Claude at $15 / $75 per Mtok: the two image prompts' text and output alone come to about
    $0.013, their six 512x512 images (350 tokens each) add $0.0315, so a $0.02 limit refuses."""
    entries = [anthropic_system()]
    inputs = runner.RunInputs(prompts=_rows(), prefixes=dict(PREFIXES), media=LIBRARY)
    with pytest.raises(CostLimitError, match=r"exceeds max_cost_usd=\$0.02"):
        runner.run(inputs, systems_from(tmp_path, entries), store, "128k", PRICES, max_cost_usd=0.02)
    assert api_env.state.generation_requests() == []
    sent = runner.run(inputs, systems_from(tmp_path, entries), store, "128k", PRICES, max_cost_usd=0.06)
    assert sent.filter(pl.col("status") == "ok").height == 2


def test_gemini_uploads_media_over_its_inline_limit_once_each_and_deletes_them(tmp_path, api_env, store):
    api_env.state.answer = _answer_if_intact
    frame = _run(tmp_path, store, [gemini_system(options={"inline_media_bytes": 1000})])
    assert frame["raw_text"].to_list() == ["Final Answer: ['1'] q-clip", "Final Answer: ['1'] q-blue",
                                           "Final Answer: ['1'] q-green"]  # fmt: skip
    apis = [r.api for r in api_env.state.requests]
    assert apis.count("gemini_file_start") == 4  # red, green (twice sent), blue, the clip: each once
    assert apis.count("gemini_file_delete") == 4 and api_env.state.gemini_files == {}
    sent = [r.body for r in api_env.state.requests if r.api in ("gemini_generate", "gemini_cache_create")]
    assert "fileData" in str(sent) and "inlineData" not in str(sent)


def test_an_audio_model_behind_the_openai_api_gets_input_audio(tmp_path, api_env, store):
    """options.input_media adds what the model takes: the clip goes as an input_audio part,
    intact; its tokens are not documented, which one line says."""
    api_env.state.answer = _answer_if_intact
    lines: list[str] = []
    entries = [openai_system("gpt-audio", context_window=100000, options={"input_media": ["audio"]})]
    frame = _run(tmp_path, store, entries, lines)
    assert frame.filter(pl.col("qid") == "q-clip")["raw_text"].to_list() == ["Final Answer: ['1'] q-clip"]
    assert "input_audio" in str([r.body for r in api_env.state.generation_requests()])
    assert any(line.startswith("gpt-audio: 1 multimodal prompt(s) with media whose tokens openai") for line in lines)
    with pytest.raises(ConfigurationError, match=r"gpt-audio: options.input_media names \['video'\]"):
        _run(tmp_path, store, [openai_system("gpt-audio", options={"input_media": ["video"]})])
