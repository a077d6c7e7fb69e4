"""Turn an :class:`~benchmarks.quality.runner.Evaluation` into a RESULTS.md section: one table of
ER_any / ER_all (overall and per question kind), partial ER, answer-present, stale rate and tokens per
system, plain verdicts against the baselines, and Elephantasm diagnostics."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from benchmarks.quality.dataset import Dataset
from benchmarks.quality.metrics import ALL, Cell, aggregate
from benchmarks.quality.runner import ABLATIONS, BASELINES, ELEPHANTASM, SYSTEMS, Evaluation, PackTrace
from benchmarks.results import Section


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def _kinds(ds: Dataset) -> list[str]:
    counts = Counter(q.kind for q in ds.questions)
    return [ALL, *sorted(k for k in counts if k != ALL)]  # a dataset without kinds labels every question "all"


RECALLS: dict[str, Callable[[Cell], float]] = {"ER_any": lambda c: c.recall_any, "ER_all": lambda c: c.recall}


def _present(ev: Evaluation, names: Iterable[str]) -> list[str]:
    """The systems among ``names`` that this evaluation ran (a baselines-only run has no Elephantasm)."""
    ran = {o.system for o in ev.outcomes}
    return [s for s in names if s in ran]


def _rows(ds: Dataset, ev: Evaluation, budgets: Sequence[int]) -> list[list[str]]:
    cells = aggregate(ev.outcomes)
    systems = _present(ev, SYSTEMS)
    counts = Counter(q.kind for q in ds.questions)
    n_all = len(ds.questions)

    def row(metric: str, kind: str, n: int, system: str, value, label: str = "") -> list[str]:  # type: ignore[no-untyped-def]
        return [metric, f"{label or kind} ({n})", system, *[value(cells[(system, kind, b)], b) for b in budgets]]

    rows = []
    for kind in _kinds(ds):
        n = n_all if kind == ALL else counts[kind]
        for metric, get in RECALLS.items():
            rows += [row(metric, kind, n, s, lambda c, b, get=get: _pct(get(c))) for s in systems]
    rows += [row("partial ER", ALL, n_all, s, lambda c, b: _pct(c.partial)) for s in systems]
    rows += [
        [
            "answer in text",
            f"{ALL} ({n_all})",
            s,
            *[_pct(sum(ev.answer_present[(s, b)]) / len(ev.answer_present[(s, b)])) for b in budgets],
        ]
        for s in systems
    ]
    stale_n = cells[(systems[0], ALL, budgets[0])].stale_n
    rows += [row("stale rate", ALL, stale_n, s, lambda c, b: _pct(c.stale_rate), "updated facts") for s in systems]
    rows += [row("mean tokens", ALL, n_all, s, lambda c, b: f"{c.mean_tokens:,.0f}") for s in systems]
    for s in _present(ev, ABLATIONS):  # diagnostics, not verdicts
        rows += [
            *[
                row(f"diag. {metric}", ALL, n_all, s, lambda c, b, get=get: _pct(get(c)))
                for metric, get in RECALLS.items()
            ],
            row("diag. stale rate", ALL, stale_n, s, lambda c, b: _pct(c.stale_rate), "updated facts"),
            row("diag. mean tokens", ALL, n_all, s, lambda c, b: f"{c.mean_tokens:,.0f}"),
        ]
    return rows


def _recall_verdict(cells: dict[tuple[str, str, int], Cell], metric: str, kind: str, budgets: Sequence[int]) -> str:
    get = RECALLS[metric]
    lost = [
        f"{b}: {_pct(get(cells[(ELEPHANTASM, kind, b)]))} vs "
        + ", ".join(f"{s} {_pct(get(cells[(s, kind, b)]))}" for s in BASELINES)
        for b in budgets
        if get(cells[(ELEPHANTASM, kind, b)]) <= max(get(cells[(s, kind, b)]) for s in BASELINES)
    ]
    where = f"{metric}, {kind} questions"
    return (
        f"{where}: Elephantasm beats every baseline at every budget."
        if not lost
        else f"{where}: Elephantasm does NOT beat every baseline at " + "; ".join(lost) + "."
    )


def verdicts(ev: Evaluation, budgets: Sequence[int]) -> list[str]:
    """Plain statements of where Elephantasm beats every baseline and where it does not."""
    if ELEPHANTASM not in _present(ev, SYSTEMS):
        return ["baselines only: no verdicts."]
    cells = aggregate(ev.outcomes)
    kinds = [ALL] + [k for k in ("paraphrase", "spread") if (ELEPHANTASM, k, budgets[0]) in cells]
    out = [_recall_verdict(cells, metric, kind, budgets) for kind in kinds for metric in RECALLS]
    c: dict[tuple[str, int], Cell] = {(s, b): cells[(s, ALL, b)] for s in SYSTEMS for b in budgets}
    if c[(ELEPHANTASM, budgets[0])].stale_rate is None:
        return out + ["stale rate: no question with superseded values in this dataset."]
    stale, ties = [], []
    for b in budgets:
        ours = c[(ELEPHANTASM, b)].stale_rate or 0
        floor = min(c[(s, b)].stale_rate or 0 for s in BASELINES)
        text = f"{b}: {_pct(ours)} vs " + ", ".join(f"{s} {_pct(c[(s, b)].stale_rate)}" for s in BASELINES)
        if ours == 0 and floor == 0:
            ties.append(text)  # a baseline holding none of the facts cannot be stale either
        elif ours >= floor:
            stale.append(text)
    tied = ("; tied at 0% with a baseline that holds none of the facts at " + "; ".join(ties)) if ties else ""
    if stale:
        out.append("stale rate: Elephantasm is NOT below every baseline at " + "; ".join(stale) + tied + ".")
    else:
        out.append(
            "stale rate: Elephantasm is below every baseline at every budget"
            + (" where any is stale at all" + tied if ties else "")
            + "."
        )
    return out


def share_note(traces: Sequence[PackTrace]) -> str:
    """ "; tokens: identity x %, …" over the packs of one budget (pack_shares.token_shares), or ""."""
    sums: Counter[str] = Counter()
    for t in traces:
        sums.update(t.tokens)
    total = sums.pop("total", 0)
    if not total:
        return ""
    return "; share of pack tokens: " + ", ".join(f"{k} {v / total:.1%}" for k, v in sums.items())


def diagnostics(ds: Dataset, ev: Evaluation, budgets: Sequence[int]) -> list[str]:
    """Where Elephantasm's misses come from: distillation, item selection, or stale layers."""
    notes = []
    if ev.evidence_state:
        states = Counter(ev.evidence_state.values())
        top = budgets[-1]
        missed = [o.question_id for o in ev.outcomes if o.system == ELEPHANTASM and o.budget == top and not o.covered]
        why = Counter(ev.evidence_state.get(q, "?") for q in missed)
        notes.append(
            f"Elephantasm evidence after dreaming: in a live memory for {states['live']}/{len(ds.questions)} "
            f"questions, only in archived/merged memories for {states['archived']}, in no memory for "
            f"{states['none']}. Misses at {top}: {len(missed)} ({why['live']} with evidence in a live memory, "
            f"i.e. not selected; {why['archived']} archived/merged; {why['none']} never distilled)."
        )
        notes.append(
            "memories/knowledge by state (all animas): " + ", ".join(f"{k} {v:,}" for k, v in sorted(ev.states.items()))
        )
    for b in budgets if ev.traces else ():
        traces = [t for t in ev.traces if t.budget == b]
        mean = {k: sum(t.layers[k] for t in traces) / len(traces) for k in traces[0].layers} if traces else {}
        stale_layers = Counter(layer for t in traces for layer in t.stale_layers)
        shares = share_note(traces)
        notes.append(
            f"Elephantasm at {b}: mean items "
            + ", ".join(f"{k} {v:.1f}" for k, v in mean.items())
            + (
                "; stale values came from " + ", ".join(f"{k} ×{v}" for k, v in sorted(stale_layers.items()))
                if stale_layers
                else ""
            )
            + shares
        )
    return notes


def section(
    ds: Dataset,
    ev: Evaluation,
    budgets: Sequence[int],
    *,
    name: str,
    title: str,
    dataset_note: str,
    environment: dict[str, str],
) -> Section:
    """The RESULTS.md section for one evaluation."""
    calls = max(1, ev.pack_calls)
    ablations = _present(ev, ABLATIONS)
    notes = [
        dataset_note,
        "ER_all / ER_any: share of questions with ALL / at least one of their evidence events cited by the pack "
        "(Elephantasm: union of item provenance; baselines: the raw turns they hold); partial ER: share of "
        "evidence cited; answer in text: the expected answer string appears in the pack; stale rate: share of "
        "packs for questions about updated facts whose text contains a superseded value (whole words, "
        "case-insensitive).",
        "Same budgets and same counter (tiktoken o200k_base) for all; baselines render `- role: content` per "
        "turn: 'recent turns' = newest contiguous turns that fit, 'bm25 turns' = BM25-ranked turns packed greedily, "
        f"'dense turns' = turns ranked by cosine to the question with embedder `{ev.dense_embedder}` (the project's "
        "configured embedder, as the server builds it), packed greedily. Conversation times are shifted so each "
        "ends one hour before the run; Elephantasm uses the default preset.",
        *(
            [
                "diag. rows: Elephantasm through `POST /api/packs/compile` with overrides ("
                + "; ".join(f"{name}: `{json.dumps(ABLATIONS[name], separators=(',', ':'))}`" for name in ablations)
                + "), run after each conversation's default packs; they locate what limits recall and are not verdicts."
            ]
            if ablations
            else []
        ),
        *verdicts(ev, budgets),
        *diagnostics(ds, ev, budgets),
        (
            f"time: ingest {ev.seconds['ingest']:.1f} s, dream {ev.seconds['dream']:.1f} s ({ev.dream_runs} runs), "
            f"{ev.pack_calls} packs at {1000 * ev.seconds['packs'] / calls:.0f} ms mean, "
            if ev.pack_calls
            else "baselines only, no server; time: "
        )
        + f"dense baseline indexing {ev.seconds['dense index']:.1f} s (measured, not asserted).",
    ]
    return Section(
        name=name,
        title=title,
        headers=["metric", "questions", "system", *[f"N={b:,}" for b in budgets]],
        rows=_rows(ds, ev, budgets),
        notes=notes,
        environment=environment,
    )
