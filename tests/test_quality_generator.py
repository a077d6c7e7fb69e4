"""The quality generator's harder questions: paraphrases that share no content word with their
evidence, facts spread over several turns, noisy chat-style sessions, all seeded and deterministic."""

from __future__ import annotations

import random
from datetime import datetime

import pytest

from benchmarks.quality.bench import SIZES
from benchmarks.quality.catalog import SLOTS
from benchmarks.quality.chat import roughen
from benchmarks.quality.dataset import Dataset
from benchmarks.quality.generator import GeneratorConfig, check, generate
from benchmarks.quality.metrics import mentions
from benchmarks.quality.paraphrases import PARAPHRASES
from benchmarks.quality.words import content_words, related, shared_content_words

CFG = GeneratorConfig(
    seed=11, conversations=3, sessions=8, turns_per_session=16, facts=10, updates=3, paraphrases=4, spreads=4
)


@pytest.fixture(scope="module")
def dataset() -> Dataset:
    return generate(CFG)


def _turns(ds: Dataset) -> dict[str, object]:
    return {t.event_id: t for c in ds.conversations for t in c.turns()}


def test_same_seed_same_dataset_other_seed_other_dataset(dataset: Dataset) -> None:
    assert generate(CFG).dumps() == dataset.dumps()
    other = generate(GeneratorConfig(**{**CFG.__dict__, "seed": 12}))
    assert other.dumps() != dataset.dumps()
    check(other)


def test_content_words_use_stop_words_and_light_stemming() -> None:
    assert content_words("What is the user's favorite drink?") == {"favorit", "drink"}
    assert related("rent", "rental") and related("defend", "defens") and not related("wed", "wedd")
    assert shared_content_words("Where does the user live?", "I lived there for years") == {("liv", "liv")}
    assert not shared_content_words("Which beverage does the user enjoy most?", "Nothing beats a mug of chai")


def test_paraphrase_catalogue_shares_no_content_word_with_its_questions() -> None:
    assert set(PARAPHRASES) == {s.x for s in SLOTS}
    for x, (statements, questions) in PARAPHRASES.items():
        for statement in statements:
            for question in questions:
                assert not shared_content_words(question, statement.format(val="Zq")), (x, question, statement)


@pytest.mark.parametrize("seed", [7, 11, 23])
def test_paraphrase_questions_share_no_content_word_with_their_evidence(seed: int) -> None:
    ds = generate(GeneratorConfig(**{**SIZES["full"].__dict__, "seed": seed}))
    turns = _turns(ds)
    paraphrases = [q for q in ds.questions if q.kind == "paraphrase"]
    assert len(paraphrases) == SIZES["full"].conversations * SIZES["full"].paraphrases
    for q in paraphrases:
        (evidence,) = q.evidence_event_ids
        assert mentions(turns[evidence].content, q.answer)
        assert not shared_content_words(q.question, turns[evidence].content), (q.question, turns[evidence].content)
    # The literal questions, by contrast, mostly reuse their evidence's words.
    literal = [q for q in ds.questions if q.kind == "literal"]
    overlapping = [q for q in literal if shared_content_words(q.question, turns[q.evidence_event_ids[0]].content)]
    assert len(overlapping) > 0.7 * len(literal)


def test_spread_facts_have_two_or_more_evidence_turns_in_order(dataset: Dataset) -> None:
    turns = _turns(dataset)
    spread = [q for q in dataset.questions if q.kind == "spread"]
    assert len(spread) == CFG.conversations * CFG.spreads
    assert any(len(q.evidence_event_ids) >= 3 for q in generate(SIZES["full"]).questions if q.kind == "spread")
    for q in spread:
        evidence = [turns[e] for e in q.evidence_event_ids]
        assert len(set(q.evidence_event_ids)) == len(evidence) >= 2
        assert all(t.role == "user" for t in evidence)
        times = [datetime.fromisoformat(t.occurred_at) for t in evidence]
        assert times == sorted(times)
        # Only the last part holds the answer: a pack citing one part is ER_any but not ER_all.
        assert mentions(evidence[-1].content, q.answer)
        assert not any(mentions(t.content, q.answer) for t in evidence[:-1])


def test_updated_facts_keep_their_superseded_value_out_of_the_evidence(dataset: Dataset) -> None:
    turns = _turns(dataset)
    updated = [q for q in dataset.questions if q.kind == "updated"]
    assert len(updated) == CFG.conversations * CFG.updates
    for q in updated:
        (newest,) = q.evidence_event_ids
        conversation = dataset.conversation(q.conversation_id).turns()
        older = [t for t in conversation if any(mentions(t.content, v) for v in q.stale_values)]
        assert older and all(t.occurred_at < turns[newest].occurred_at for t in older)


def test_noisy_sessions_are_short_lowercase_and_interleaved(dataset: Dataset) -> None:
    sessions = [s for c in dataset.conversations for s in c.sessions]
    noisy = [s for s in sessions if all(t.content == t.content.lower() for t in s.turns)]
    tidy = [s for s in sessions if s not in noisy]
    assert noisy and tidy
    mean = lambda ss: sum(len(t.content) for s in ss for t in s.turns) / sum(len(s.turns) for s in ss)  # noqa: E731
    assert mean(noisy) < 0.5 * mean(tidy)
    # Bursts: in noisy sessions one side sometimes sends two messages in a row.
    assert any(a.role == b.role for s in noisy for a, b in zip(s.turns, s.turns[1:], strict=False))


def test_roughen_keeps_values_intact_and_is_seeded() -> None:
    text = "I'm going to visit Ursula Le Guin's house, you know, because it's really lovely."
    a = [roughen(random.Random(n), text, ("Ursula Le Guin",)) for n in range(40)]
    assert a == [roughen(random.Random(n), text, ("Ursula Le Guin",)) for n in range(40)]
    assert all(mentions(x, "Ursula Le Guin") and x == x.lower() and not x.endswith(".") for x in a)
    assert any("gonna" in x or " u " in x or "cuz" in x for x in a) and len(set(a)) > 10


def test_check_refuses_a_paraphrase_sharing_a_word_and_a_spread_with_one_turn(dataset: Dataset) -> None:
    from dataclasses import replace

    turns = _turns(dataset)
    para = next(q for q in dataset.questions if q.kind == "paraphrase")
    evidence = turns[para.evidence_event_ids[0]].content
    borrowed = next(w for w in evidence.split() if content_words(w))  # one content word of the evidence
    leaky = replace(para, question=f"{para.question} ({borrowed})")
    with pytest.raises(ValueError, match="shares content words"):
        check(Dataset(dataset.conversations, [leaky]))
    spread = next(q for q in dataset.questions if q.kind == "spread")
    with pytest.raises(ValueError, match="fewer than two"):
        check(Dataset(dataset.conversations, [replace(spread, evidence_event_ids=spread.evidence_event_ids[-1:])]))
