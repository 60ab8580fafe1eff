"""QUEST-LOFT justified QA and answer verification (seed 002 §3.5-3.7, App. C.3 and D).

Justified QA asks for one JSON object: the candidate answers, each with evidence for and against
(cited by document ID), reasoning and a TRUE/FALSE judgment, then the final `answer` list and
the IDs of the documents holding the key evidence (`answer_doc_ids`). The documents are the
whole corpus (corpus in context, QUEST-LOFT's "Static - All"), or bm25's top k (rag_top{k}_justified,
QUEST-LOFT's "RAG Justified QA"), one line each: `ID: {doc_id} | TITLE: {title} | CONTENT: {text}`
with the prompt variant's shown IDs.

Verification then judges every candidate (TRUE or FALSE alike) in a call of its own that shows
only the documents cited as evidence for it; the final answer is the candidates judged TRUE.
A candidate that cites no document of the corpus is not sent and counts as not verified.

Parsing (both rules return the parse status; a broken answer never raises):
- loft: the first JSON object in the response (after a CoT's `Step 2` header, inside code
  fences or not), trailing commas repaired; the `answer` list, whatever else is wrong.
- strict: the same object must also satisfy the printed schema (jsonschema): every required key
  with its type, final_judgment TRUE or FALSE; otherwise nothing is read (schema_violation).
For datasets whose answers are entities (QUEST, QAMPARI), QUEST-LOFT maps `answer_doc_ids` to
the documents' titles instead of reading the `answer` strings (§3.5); the prediction keeps the
IDs and scoring reads them as titles.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import jsonschema

from loft_warehouse.design import Design
from loft_warehouse.methods.catalogue import Method
from loft_warehouse.methods.stage1 import single_turn_rows
from loft_warehouse.methods.stages import Call, Upstream
from loft_warehouse.prompts.inputs import Collection, Doc
from loft_warehouse.prompts.render import Rendered
from loft_warehouse.prompts.templates import fill, template, with_bullet
from loft_warehouse.prompts.variants import Variant, arrange, shown_ids

_DOC_ID = {"type": ["string", "integer"]}
_EVIDENCE = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["doc_id", "text"],
        "properties": {"doc_id": _DOC_ID, "text": {"type": "string"}},
    },
}
CANDIDATE_SCHEMA = {
    "type": "object",
    "required": ["candidate_answer", "evidence_for", "evidence_against", "reasoning", "final_judgment"],
    "properties": {
        "candidate_answer": {"type": "string"},
        "evidence_for": _EVIDENCE,
        "evidence_against": _EVIDENCE,
        "reasoning": {"type": "string"},
        "final_judgment": {"enum": ["TRUE", "FALSE"]},
    },
}
ANSWER_SCHEMA = {
    "type": "object",
    "required": ["candidate_answers", "answer", "answer_doc_ids"],
    "properties": {
        "question": {"type": "string"},
        "candidate_answers": {"type": "array", "items": CANDIDATE_SCHEMA},
        "answer": {"type": "array", "items": {"type": "string"}},
        "answer_doc_ids": {"type": "array", "items": _DOC_ID},
    },
}
_STEP_2 = re.compile(r"=+\s*Step 2: JSON response\s*=+", re.IGNORECASE)
_END = re.compile(r"=+\s*END\s*=+", re.IGNORECASE)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")

OK = "ok"
REPAIRED = "repaired"
NO_TEXT = "no_text"
NO_JSON = "no_json"
INVALID_JSON = "invalid_json"
SCHEMA_VIOLATION = "schema_violation"
# The final row of a verified method whose justified answer had no candidate to verify.
NOTHING_TO_VERIFY = "nothing_to_verify"


@dataclass(frozen=True)
class JsonParse:
    """One response read as JSON: the object (None when unreadable), status and detail."""

    value: Any
    status: str
    detail: str | None = None


def _json_text(text: str) -> str | None:
    """The first balanced {...} of the response's JSON part (string-aware)."""
    step = _STEP_2.search(text)
    if step:
        text = text[step.end() :]
        end = _END.search(text)
        text = text[: end.start()] if end else text
    start = text.find("{")
    if start < 0:
        return None
    depth, quoted, escaped = 0, False, False
    for index in range(start, len(text)):
        char = text[index]
        if quoted:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[start : index + 1]
    return None


def read_json(text: str | None, schema: dict[str, Any] | None) -> JsonParse:
    """The response's JSON object; with a schema, validated against it."""
    if text is None or not text.strip():
        return JsonParse(None, NO_TEXT)
    chunk = _json_text(text)
    if chunk is None:
        return JsonParse(None, NO_JSON)
    status = OK
    try:
        value = json.loads(chunk)
    except json.JSONDecodeError:
        try:
            value = json.loads(_TRAILING_COMMA.sub(r"\1", chunk))
            status = REPAIRED
        except json.JSONDecodeError as exc:
            return JsonParse(None, INVALID_JSON, f"{exc.msg} at character {exc.pos}")
    if not isinstance(value, dict):
        return JsonParse(None, SCHEMA_VIOLATION, "the JSON value is not an object")
    if schema is not None:
        error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(value))
        if error is not None:
            path = "$" + "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
            return JsonParse(None, SCHEMA_VIOLATION, f"{path}: {error.message}"[:300])
    return JsonParse(value, status)


def _strings(value: Any) -> list[str]:
    return [str(item) for item in value] if isinstance(value, list) else []


def parse_answer(text: str | None, rule: str) -> tuple[list[str], str, str | None, dict[str, Any] | None]:
    """(answers, status, detail, payload) of a justified QA response under a rule; the payload
    keeps what a verification stage needs: each candidate with the IDs it cites, and the
    answer_doc_ids."""
    parsed = read_json(text, ANSWER_SCHEMA if rule == "strict" else None)
    if parsed.value is None:
        return [], parsed.status, parsed.detail, None
    value = parsed.value
    if not isinstance(value.get("answer"), list):
        return [], SCHEMA_VIOLATION, "$.answer: missing or not a list", None
    candidates = [
        {
            "candidate": str(c.get("candidate_answer")),
            "judgment": str(c.get("final_judgment")),
            "doc_ids": [str(e.get("doc_id")).strip() for e in c.get("evidence_for") or [] if isinstance(e, dict)],
        }
        for c in value.get("candidate_answers") or []
        if isinstance(c, dict) and c.get("candidate_answer") is not None
    ]
    payload = {"candidates": candidates, "answer_doc_ids": [str(i).strip() for i in value.get("answer_doc_ids") or []]}
    return _strings(value["answer"]), parsed.status, parsed.detail, payload


def parse_verdict(text: str | None, rule: str, candidate: str) -> tuple[list[str], str, str | None]:
    """([candidate] when judged TRUE, else []), status, detail of a verification response.

    loft reads any final_judgment that says true (case and spaces aside); strict needs the
    candidate's whole schema and exactly "TRUE"."""
    parsed = read_json(text, CANDIDATE_SCHEMA if rule == "strict" else None)
    if parsed.value is None:
        return [], parsed.status, parsed.detail
    judgment = str(parsed.value.get("final_judgment", "")).strip()
    verified = judgment == "TRUE" if rule == "strict" else judgment.upper() == "TRUE"
    return ([candidate] if verified else []), parsed.status, parsed.detail


def qa_template(method: Method) -> str:
    text = template("justified_qa_cot" if method.cot else "justified_qa")
    return with_bullet(text, template("justified_quest_bullet")) if method.quest else text


def verification_template(method: Method) -> str:
    text = template("verification_cot" if method.cot else "verification")
    return with_bullet(text, template("justified_quest_bullet")) if method.quest else text


def document_lines(documents: list[tuple[str, Doc]]) -> list[str]:
    """`ID: {doc_id} | TITLE: {title} | CONTENT: {text}` per document, each ending in a newline."""
    line = template("justified_document")
    return [fill(line, doc_id=shown, title=doc.title or "None", text=doc.text) + "\n" for shown, doc in documents]


def _split(text: str, field: str) -> tuple[str, str]:
    marker = "{{" + field + "}}"
    before, found, after = text.partition(marker)
    if not found:
        raise ValueError(f"template has no {marker}")
    return before, after


def render_stage1(collection: Collection, variant: Variant, method: Method, design: Design, seed: int) -> Rendered:
    """The justified QA prompt over the whole corpus: instructions and documents are the shared
    prefix, the question the suffix."""
    docs = arrange(collection, variant)
    ids = shown_ids(collection, variant, len(docs), seed)
    lines = document_lines(list(zip(ids, docs, strict=True)))
    before, after = _split(qa_template(method), "documents")
    prefix = before + "".join(lines)
    offsets, at = {}, len(before)
    for doc, line in zip(docs, lines, strict=True):
        offsets[doc.pid] = at
        at += len(line)
    tail = after.removeprefix("\n")
    rows = single_turn_rows(collection, docs, ids, lambda question: fill(tail, question=question), offsets)
    return Rendered(
        prefix=prefix,
        shown=tuple((s, d.pid) for s, d in zip(ids, docs, strict=True)),
        rows=rows,
        method=method.name,
    )


def retrieved_reader(upstream: Upstream) -> list[Call]:
    """Stage 2 of rag_top{k}_justified: the justified QA prompt over bm25's top k passages (its
    answer's first k shown IDs), in rank order and with their shown IDs."""
    pids = upstream.retrieved()
    if not pids:
        return []
    docs = upstream.documents(pids)
    before, after = _split(qa_template(upstream.method), "documents")
    shown = upstream.shown_ids(docs)
    lines = "".join(document_lines(list(zip(shown, docs, strict=True))))
    return [Call(0, before, lines + fill(after.removeprefix("\n"), question=upstream.question), docs, shown=shown)]


def verification_text(method: Method, question: str, documents: list[tuple[str, Doc]], candidate: str) -> str:
    """One verification prompt: the cited documents, the question and the candidate."""
    documents_text = "".join(document_lines(documents)).removesuffix("\n")
    return fill(verification_template(method), documents=documents_text, question=question, candidate_answer=candidate)


def verification_calls(upstream: Upstream) -> list[Call]:
    """Stage 2: one verification prompt per candidate of the (strictly read) justified answer,
    over the documents it cites as evidence for it; a candidate citing no shown document is not
    sent (not verified)."""
    row = upstream.rows[0]
    payload = row["payload_strict"] if row["status"] == "ok" else None
    calls = []
    for index, candidate in enumerate((json.loads(payload) or {}).get("candidates", []) if payload else []):
        docs = upstream.documents(upstream.maps.pids(upstream.key, candidate.get("doc_ids") or [], "shown"))
        if not docs:
            continue
        name = str(candidate.get("candidate"))
        shown = upstream.shown_ids(docs)
        text = verification_text(upstream.method, upstream.question, list(zip(shown, docs, strict=True)), name)
        payload = json.dumps({"candidate": candidate.get("candidate")}, ensure_ascii=False)
        calls.append(Call(index, "", text, docs, payload, shown))
    return calls


def verify_retrieved(upstream: Upstream) -> list[Call]:
    """Stage 2 of rag_top{k}_verify: one verification prompt per document of bm25's top k (its
    answer's first k shown IDs, in rank order), the document's entity (its title; its text when
    untitled) as the candidate and that document alone as the evidence."""
    calls = []
    for index, doc in enumerate(upstream.documents(upstream.retrieved())):
        entity = doc.title or doc.text
        shown = upstream.shown_ids([doc])
        text = verification_text(upstream.method, upstream.question, [(shown[0], doc)], entity)
        calls.append(Call(index, "", text, [doc], json.dumps({"candidate": entity}, ensure_ascii=False), shown))
    return calls
