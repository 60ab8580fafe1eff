"""Multi-turn queries go out as conversations with the model's earlier (parsed) answers."""

from __future__ import annotations

import polars as pl

from loft_warehouse.inference import runner
from loft_warehouse.prompts.multiturn import fill_model_answers
from tests.inference.support import PREFIX_A, openai_system, prompt_row, systems_from

SUFFIX_1 = "Q: first\n<<MODEL_ANSWER turn=0>>Q: second\n"
SUFFIX_2 = "Q: first\n<<MODEL_ANSWER turn=0>>Q: second\n<<MODEL_ANSWER turn=1>>Q: third\n"


def test_messages_alternate_and_join_to_the_filled_prompt():
    answers = ["['a']", "['b', 'c']"]
    messages = runner.build_messages("PREFIX\n", SUFFIX_2, answers)
    assert messages == [
        {"role": "user", "content": "PREFIX\nQ: first\n"},
        {"role": "assistant", "content": "['a']"},
        {"role": "user", "content": "Q: second\n"},
        {"role": "assistant", "content": "['b', 'c']"},
        {"role": "user", "content": "Q: third\n"},
    ]
    joined = "".join(m["content"] for m in messages)
    assert joined == "PREFIX\n" + fill_model_answers(SUFFIX_2, answers)


def test_single_turn_is_one_user_message():
    assert runner.build_messages("P", "S", []) == [{"role": "user", "content": "PS"}]


def _conversation() -> pl.DataFrame:
    suffixes = ["Q: first\n", SUFFIX_1, SUFFIX_2]
    return pl.DataFrame(
        [
            prompt_row(
                "pa",
                "conv",
                suffix,
                turn=turn,
                n_turns=3,
                prompt_id=f"sql/ds_pa/ds_pa/default/conv/{turn}",
            )
            for turn, suffix in enumerate(suffixes)
        ]
    )


def test_turns_are_sent_in_order_with_what_loft_feeds_back(tmp_path, api_env, store):
    replies = ["Reasoning.\nFinal Answer: ['x1']", "I see [1], [2].\nFinal Answer: ['y1', 'y2']", "Final Answer: []"]
    answers = iter(replies)
    api_env.state.answer = lambda prompt: next(answers)

    systems = systems_from(tmp_path, [openai_system(concurrency=4)])
    frame = runner.run(
        runner.RunInputs(_conversation(), {"pa": PREFIX_A}),
        systems,
        store,
        "128k",
        {},
        emit=lambda line: None,
    )
    assert frame.sort("turn")["raw_text"].to_list()[0] == "Reasoning.\nFinal Answer: ['x1']"
    sent = [r.body["messages"] for r in api_env.state.generation_requests()]
    assert [len(m) for m in sent] == [1, 3, 5]
    assert sent[2][1] == {"role": "assistant", "content": "['x1']"}
    assert sent[2][3] == {"role": "assistant", "content": "([1], [2])"}  # LOFT reads the first bracketed line
    assert sent[2][4]["content"] == "Q: third\n"
    # A rerun walks the stored turns (re-deriving later keys from stored answers): no calls.
    again = runner.run(
        runner.RunInputs(_conversation(), {"pa": PREFIX_A}),
        systems,
        store,
        "128k",
        {},
        emit=lambda line: None,
    )
    assert len(api_env.state.generation_requests()) == 3
    assert again["request_key"].to_list() == frame["request_key"].to_list()


def test_a_failed_turn_feeds_back_an_empty_answer(tmp_path, api_env, store):
    api_env.state.fault_rule = lambda prompt: "bad_request" if prompt.endswith("Q: first\n") else None
    systems = systems_from(tmp_path, [openai_system(concurrency=1)])
    frame = runner.run(
        runner.RunInputs(_conversation(), {"pa": PREFIX_A}),
        systems,
        store,
        "128k",
        {},
        feedback=lambda text, shown_to_pid: "never",
        emit=lambda line: None,
    )
    assert frame.sort("turn")["status"].to_list() == ["error", "ok", "ok"]
    second = api_env.state.generation_requests()[1].body["messages"]
    assert second[1]["content"] == "[]"


def test_a_retrieval_conversation_feeds_back_pids_as_loft_maps_them(tmp_path, api_env, store):
    """LOFT maps each shown ID to its pid before appending the answers (run_inference's
    pid_mapper); an ID the corpus lacks stays as read, where LOFT's run would stop."""
    answers = iter(["Final Answer: [1, 0]", "Final Answer: ['0', 7]", "Final Answer: []"])
    api_env.state.answer = lambda prompt: next(answers)
    doc_ids = pl.DataFrame(
        {
            "task": ["retrieval"] * 2,
            "dataset": ["ds_pa"] * 2,
            "corpus_id": ["ds_pa"] * 2,
            "variant": ["default"] * 2,
            "shown_id": ["0", "1"],
            "pid": ["doc-zero", "doc-one"],
        }
    )
    systems = systems_from(tmp_path, [openai_system(concurrency=1)])
    runner.run(
        runner.RunInputs(_conversation(), {"pa": PREFIX_A}, doc_ids=doc_ids), systems, store, "128k", {},
        emit=lambda line: None,
    )  # fmt: skip
    last = api_env.state.generation_requests()[2].body["messages"]
    assert last[1] == {"role": "assistant", "content": "['doc-one', 'doc-zero']"}
    assert last[3] == {"role": "assistant", "content": "['doc-zero', 7]"}
