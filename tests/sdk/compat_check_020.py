"""Run inside a venv holding both ``elephantasm`` 0.2.0 and ``elephantasm_sdk``: print a JSON list of
incompatibilities (empty means a user can switch by changing the import).

Usage: python compat_check_020.py PACK_JSON_FILE
"""

from __future__ import annotations

import inspect
import json
import sys

import elephantasm as old
import elephantasm_sdk as new

P = inspect.Parameter
problems: list[str] = []


def check_signature(name: str, before: object, after: object) -> None:
    """Every old parameter keeps its name, kind, position and default; new ones are optional."""
    old_params = list(inspect.signature(before).parameters.values())
    new_params = list(inspect.signature(after).parameters.values())
    for i, p in enumerate(old_params):
        q = new_params[i] if i < len(new_params) else None
        if q is None or (p.name, p.kind, p.default) != (q.name, q.kind, q.default):
            problems.append(f"{name}: parameter {i} {p} became {q}")
    for q in new_params[len(old_params) :]:
        if q.default is P.empty and q.kind not in (P.VAR_POSITIONAL, P.VAR_KEYWORD):
            problems.append(f"{name}: new required parameter {q.name}")


def check_api() -> None:
    problems.extend(f"missing export {n}" for n in old.__all__ if n != "__version__" and not hasattr(new, n))
    for fn in ("inject", "extract", "create_anima"):
        check_signature(fn, getattr(old, fn), getattr(new, fn))
    for meth in ("__init__", "inject", "extract", "create_anima", "close", "__enter__", "__exit__"):
        check_signature(f"Elephantasm.{meth}", getattr(old.Elephantasm, meth), getattr(new.Elephantasm, meth))
    if {m.name: m.value for m in old.EventType} != {m.name: m.value for m in new.EventType}:
        problems.append("EventType members differ")
    if {m.name: m.value for m in old.MemoryState} != {m.name: m.value for m in new.MemoryState}:
        problems.append("MemoryState members differ")


def check_exceptions() -> None:
    for name in ("AuthenticationError", "NotFoundError", "RateLimitError", "ValidationError", "ServerError"):
        before, after = getattr(old, name), getattr(new, name)
        if not issubclass(after, new.ElephantasmError):
            problems.append(f"{name} is not an ElephantasmError")
        if (before().message, before().status_code) != (after().message, after().status_code):
            problems.append(f"{name}() defaults differ")
        if after("boom").message != "boom" or str(after("boom")) != "boom":
            problems.append(f"{name}(message) differs")
    if new.ElephantasmError("x", status_code=418).status_code != 418:
        problems.append("ElephantasmError(message, status_code) differs")


def check_models(pack_body: dict) -> None:
    for name in ("Anima", "AnimaCreate", "Event", "EventCreate", "Memory", "MemoryPack", "ScoredMemory",
                 "ScoredKnowledge", "TemporalContext", "IdentityContext"):  # fmt: skip
        missing = set(getattr(old, name).model_fields) - set(getattr(new, name).model_fields)
        if missing:
            problems.append(f"{name} lacks fields {sorted(missing)}")
    before, after = old.MemoryPack(**pack_body), new.MemoryPack(**pack_body)
    pairs = {
        "as_prompt": (before.as_prompt(), after.as_prompt()),
        "identity.prose": (before.identity.prose, after.identity.prose),
        "session_memories": ([m.id for m in before.session_memories], [m.id for m in after.session_memories]),
        "long_term_memories": ([m.score for m in before.long_term_memories], [m.score for m in after.long_term_memories]),
        "knowledge": ([k.content for k in before.knowledge], [k.content for k in after.knowledge]),
        "temporal_context": (before.temporal_context.formatted, after.temporal_context.formatted),
        "content['context']": (before.content["context"], after.content["context"]),
    }  # fmt: skip
    problems.extend(f"MemoryPack.{k}: {a!r} != {b!r}" for k, (a, b) in pairs.items() if a != b)


if __name__ == "__main__":
    check_api()
    check_exceptions()
    with open(sys.argv[1]) as fh:
        check_models(json.load(fh))
    print(json.dumps(problems))
