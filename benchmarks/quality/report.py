"""Turn an :class:`~benchmarks.quality.runner.Evaluation` into a RESULTS.md section: one table of
ER@N / partial / answer-present / stale rate / tokens per system (overall and per question kind),
plain verdicts against the baselines, and Elephantasm diagnostics."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

from benchmarks.quality.dataset import Dataset
from benchmarks.quality.metrics import ALL, Cell, aggregate
from benchmarks.quality.runner import ABLATIONS, BM25, ELEPHANTASM, RECENT, SYSTEMS, Evaluation
from benchmarks.results import Section


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def _kinds(ds: Dataset) -> list[str]:
    counts = Counter(q.kind for q in ds.questions)
    return [ALL, *sorted(counts)]


def _rows(ds: Dataset, ev: Evaluation, budgets: Sequence[int]) -> list[list[str]]:
    cells = aggregate(ev.outcomes)
    counts = Counter(q.kind for q in ds.questions)
    n_all = len(ds.questions)

    def row(metric: str, kind: str, n: int, system: str, value, label: str = "") -> list[str]:  # type: ignore[no-untyped-def]
        return [metric, f"{label or kind} ({n})", system, *[value(cells[(system, kind, b)], b) for b in budgets]]

    rows = []
    for kind in _kinds(ds):
        n = n_all if kind == ALL else counts[kind]
        rows += [row("ER@N", kind, n, s, lambda c, b: _pct(c.recall)) for s in SYSTEMS]
    rows += [row("partial ER@N", ALL, n_all, s, lambda c, b: _pct(c.partial)) for s in SYSTEMS]
    rows += [["answer in text", f"{ALL} ({n_all})", s,
              *[_pct(sum(ev.answer_present[(s, b)]) / len(ev.answer_present[(s, b)])) for b in budgets]]
             for s in SYSTEMS]
    stale_n = cells[(ELEPHANTASM, ALL, budgets[0])].stale_n
    rows += [row("stale rate", ALL, stale_n, s, lambda c, b: _pct(c.stale_rate), "updated facts") for s in SYSTEMS]
    rows += [row("mean tokens", ALL, n_all, s, lambda c, b: f"{c.mean_tokens:,.0f}") for s in SYSTEMS]
    for s in ABLATIONS:  # diagnostics, not verdicts
        rows += [row("diag. ER@N", ALL, n_all, s, lambda c, b: _pct(c.recall)),
                 row("diag. stale rate", ALL, stale_n, s, lambda c, b: _pct(c.stale_rate), "updated facts"),
                 row("diag. mean tokens", ALL, n_all, s, lambda c, b: f"{c.mean_tokens:,.0f}")]
    return rows


def verdicts(ev: Evaluation, budgets: Sequence[int]) -> list[str]:
    """Plain statements of where Elephantasm beats both baselines and where it does not."""
    cells = aggregate(ev.outcomes)
    c: dict[tuple[str, int], Cell] = {(s, b): cells[(s, ALL, b)] for s in SYSTEMS for b in budgets}
    lost = [f"{b}: {_pct(c[(ELEPHANTASM, b)].recall)} vs recent {_pct(c[(RECENT, b)].recall)}, "
            f"BM25 {_pct(c[(BM25, b)].recall)}"
            for b in budgets if c[(ELEPHANTASM, b)].recall <= max(c[(RECENT, b)].recall, c[(BM25, b)].recall)]
    out = ["ER@N: Elephantasm beats both baselines at every budget." if not lost else
           "ER@N: Elephantasm does NOT beat both baselines at " + "; ".join(lost) + "."]
    if c[(ELEPHANTASM, budgets[0])].stale_rate is None:
        return out + ["stale rate: no question with superseded values in this dataset."]
    stale, ties = [], []
    for b in budgets:
        ours = c[(ELEPHANTASM, b)].stale_rate or 0
        floor = min(c[(RECENT, b)].stale_rate or 0, c[(BM25, b)].stale_rate or 0)
        text = (f"{b}: {_pct(ours)} vs recent {_pct(c[(RECENT, b)].stale_rate)}, "
                f"BM25 {_pct(c[(BM25, b)].stale_rate)}")
        if ours == 0 and floor == 0:
            ties.append(text)  # a baseline holding none of the facts cannot be stale either
        elif ours >= floor:
            stale.append(text)
    tied = ("; tied at 0% with a baseline that holds none of the facts at " + "; ".join(ties)) if ties else ""
    if stale:
        out.append("stale rate: Elephantasm is NOT below both baselines at " + "; ".join(stale) + tied + ".")
    else:
        out.append("stale rate: Elephantasm is below both baselines at every budget"
                   + (" where either is stale at all" + tied if ties else "") + ".")
    return out


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
        notes.append("memories/knowledge by state (all animas): "
                     + ", ".join(f"{k} {v:,}" for k, v in sorted(ev.states.items())))
    for b in budgets:
        traces = [t for t in ev.traces if t.budget == b]
        mean = {k: sum(t.layers[k] for t in traces) / len(traces) for k in traces[0].layers} if traces else {}
        stale_layers = Counter(layer for t in traces for layer in t.stale_layers)
        notes.append(f"Elephantasm at {b}: mean items " + ", ".join(f"{k} {v:.1f}" for k, v in mean.items())
                     + ("; stale values came from " + ", ".join(f"{k} ×{v}" for k, v in sorted(stale_layers.items()))
                        if stale_layers else ""))
    return notes


def section(ds: Dataset, ev: Evaluation, budgets: Sequence[int], *, name: str, title: str,
            dataset_note: str, environment: dict[str, str]) -> Section:
    """The RESULTS.md section for one evaluation."""
    calls = max(1, ev.pack_calls)
    notes = [
        dataset_note,
        "ER@N: share of questions whose evidence events are ALL cited by the pack (Elephantasm: union of "
        "item provenance; baselines: the raw turns they hold); partial: share of evidence cited; answer in "
        "text: the expected answer string appears in the pack; stale rate: share of packs for questions about "
        "updated facts whose text contains a superseded value (whole words, case-insensitive).",
        "Same budgets and same counter (tiktoken o200k_base) for all; baselines render `- role: content` per "
        "turn: 'recent turns' = newest contiguous turns that fit, 'bm25 turns' = BM25-ranked turns packed greedily. "
        "Conversation times are shifted so each ends one hour before the run; Elephantasm uses the default preset.",
        "diag. rows: Elephantasm through `POST /api/packs/compile` with overrides ("
        + "; ".join(f"{name}: `{json.dumps(o, separators=(',', ':'))}`" for name, o in ABLATIONS.items())
        + "), run after each conversation's default packs; they locate what limits recall and are not verdicts.",
        *verdicts(ev, budgets),
        *diagnostics(ds, ev, budgets),
        f"time: ingest {ev.seconds['ingest']:.1f} s, dream {ev.seconds['dream']:.1f} s ({ev.dream_runs} runs), "
        f"{ev.pack_calls} packs at {1000 * ev.seconds['packs'] / calls:.0f} ms mean (measured, not asserted).",
    ]
    return Section(
        name=name, title=title,
        headers=["metric", "questions", "system", *[f"N={b:,}" for b in budgets]],
        rows=_rows(ds, ev, budgets), notes=notes, environment=environment,
    )
