"""The llama.cpp adapter: one loaded GGUF model and its context (sequence 0).

Not thread-safe (llama.cpp contexts are not): callers hold :attr:`LocalEngine.lock` around any
sequence of calls (restore → prefill → generate) and run them off the event loop.

Identical output after a restore needs the same numerics on every path. Prompt tokens are always
evaluated in batches of at least :data:`MIN_BATCH` tokens (llama.cpp's CPU kernels compute a token
of a multi-token batch the same way whatever the batch's size or start, but a single token another
way), so the KV of a prompt position is the same whether it was computed in one call, after a
restore, or in a turn that cut the cache back; generated tokens (one per call) are never reused.
Prefix and suffix are tokenized separately, the prefix line by line, which also gives every pack
line a known token range.

:attr:`LocalEngine.owner` names whose prompt the live cache holds (the chat path sets it), and
:attr:`LocalEngine.n_exact` how many of its positions were evaluated as prompt; every other use of
the engine resets the owner, so a live cache is only reused by the conversation that made it.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from elephantasm.domain.kv.ranges import line_offsets, split_lines
from elephantasm.local.errors import KVStateError, TemplateSplitError
from elephantasm.local.model import file_sha256
from elephantasm.local.sampling import Sampler, Sampling
from elephantasm.local.states import StateCache

KV_TYPES = ("f16", "q8_0")
MIN_BATCH = 8
# ChatML: used when a GGUF carries no template of its own.
CHATML = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


@dataclass(frozen=True, slots=True)
class Generated:
    """A finished generation: token ids, text and why it stopped (``stop``, ``length``, or ``cancelled``
    when the caller asked it to stop early, e.g. a streaming client that disconnected)."""

    tokens: list[int]
    text: str
    finish_reason: str


class LocalEngine:
    """One GGUF model loaded with llama.cpp, plus what identifies it (file digest, template)."""

    def __init__(
        self, path: Path, *, n_ctx: int = 4096, n_threads: int = 1, kv_type: str = "f16", memory_bytes: int = 512 << 20
    ) -> None:
        import llama_cpp
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        if kv_type not in KV_TYPES:
            raise KVStateError(f"kv_type: {kv_type!r} is not one of {', '.join(KV_TYPES)}")
        kwargs: dict[str, Any] = {}
        if kv_type == "q8_0":  # a quantised V cache needs flash attention in llama.cpp
            kwargs = {"type_k": llama_cpp.GGML_TYPE_Q8_0, "type_v": llama_cpp.GGML_TYPE_Q8_0, "flash_attn": True}
        self._c = llama_cpp
        self.llm = _load(
            llama_cpp,
            model_path=str(path),
            n_ctx=n_ctx,
            seed=0,
            n_threads=n_threads,
            n_threads_batch=n_threads,
            verbose=False,
            **kwargs,
        )
        self.lock = threading.Lock()
        self.path, self.kv_type = path, kv_type
        self.n_ctx = min(n_ctx, self.llm.n_ctx())  # llama.cpp may round up; its token buffers may not
        self.model_digest = file_sha256(path)
        self.template = self.llm.metadata.get("tokenizer.chat_template") or CHATML
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
        self._template = env.from_string(self.template)
        self._vocab = llama_cpp.llama_model_get_vocab(self.llm.model)
        self.llama_cpp_version = getattr(llama_cpp, "__version__", "unknown")
        self.owner: object | None = None
        self.n_exact = 0
        self.states = StateCache(memory_bytes)
        self._tokenized = functools.lru_cache(maxsize=8)(self._tokenize_prefix)
        # False once a restore on this model was found not to spare the work it should have
        # (services.kv.reuse): restores are then no longer tried in this process.
        self.reuse_ok = True
        self._start_counters()

    # --- identity -------------------------------------------------------------------------
    @property
    def model_name(self) -> str:
        return self.llm.metadata.get("general.name") or self.path.stem

    def describe(self) -> dict[str, Any]:
        """Reconstruction hints: what a state from this engine needs to be loaded again."""
        md = self.llm.metadata
        return {
            "model_name": self.model_name,
            "model_file": self.path.name,
            "model_digest": self.model_digest,
            "architecture": md.get("general.architecture"),
            "tokenizer": md.get("tokenizer.ggml.model"),
            "n_layer": self._c.llama_model_n_layer(self.llm.model),
            "n_head_kv": self._c.llama_model_n_head_kv(self.llm.model),
            "n_vocab": self.llm.n_vocab(),
            "n_ctx": self.n_ctx,
            "kv_type": self.kv_type,
            "rope_freq_base": md.get(f"{md.get('general.architecture')}.rope.freq_base"),
            "llama_cpp_version": self.llama_cpp_version,
        }

    # --- prompt text ----------------------------------------------------------------------
    def _render(self, messages: Sequence[dict[str, str]], generation: bool) -> str:
        return self._template.render(
            messages=list(messages),
            add_generation_prompt=generation,
            bos_token="",
            eos_token="",
            raise_exception=_raise,
        )

    def split_prompt(self, system: str, turns: Sequence[dict[str, str]], cue: bool = True) -> tuple[str, str]:
        """(prefix, suffix): the system turn alone, and the rest up to the assistant's cue (``cue``,
        else up to the end of the last turn)."""
        prefix = self._render([{"role": "system", "content": system}], False)
        full = self._render([{"role": "system", "content": system}, *turns], cue)
        if not full.startswith(prefix):
            raise TemplateSplitError("the model's chat template does not keep the system turn as a stable prefix")
        return prefix, full[len(prefix) :]

    def tokenize_prefix(self, prefix: str) -> list[int]:
        """The tokens of a prefix, tokenized line by line (:meth:`tokenize_line`; the last few
        prefixes are remembered: every turn of a conversation has the same one)."""
        return list(self._tokenized(prefix))

    def _tokenize_prefix(self, prefix: str) -> tuple[int, ...]:
        return tuple(line_offsets(split_lines(prefix), self.tokenize_line)[0])

    def tokenize_line(self, line: str, index: int) -> list[int]:
        """The tokens of the prefix's line ``index`` (the first one starts with BOS)."""
        return self.llm.tokenize(line.encode(), add_bos=(index == 0), special=True)

    def tokenize_suffix(self, suffix: str) -> list[int]:
        return self.llm.tokenize(suffix.encode(), add_bos=False, special=True)

    # --- KV state -------------------------------------------------------------------------
    def _memory(self) -> Any:
        return self._c.llama_get_memory(self.llm.ctx)

    def _start_counters(self) -> None:
        # llama.cpp reports its token counters as max(1, n): evaluate one batch and one single
        # token now so that both are past 1 and every later difference is exact.
        self.llm.eval(self.llm.tokenize(b"a b c", add_bos=True))
        self.llm.eval([self.llm.token_eos()])
        self.clear()

    def decoded(self) -> int:
        """Tokens llama.cpp has evaluated in this context so far, by its own count (prompt batches
        and single tokens): the evidence that a restore spared what it should have."""
        self._c.llama_synchronize(self.llm.ctx)
        data = self._c.llama_perf_context(self.llm.ctx)
        return int(data.n_p_eval) + int(data.n_eval)

    def clear(self) -> None:
        self._c.llama_memory_clear(self._memory(), True)
        self.llm.n_tokens = 0
        self.n_exact = 0
        self.owner = None

    def held(self) -> list[int]:
        """The prompt tokens whose KV the cache holds exactly (positions ``[0, n_exact)``)."""
        return self.llm.input_ids[: self.n_exact].tolist()

    def _eval(self, tokens: Sequence[int]) -> None:
        if self.llm.n_tokens + len(tokens) >= self.n_ctx:
            raise KVStateError(f"prompt of {self.llm.n_tokens + len(tokens)} tokens does not fit n_ctx={self.n_ctx}")
        exact = self.n_exact == self.llm.n_tokens and len(tokens) >= MIN_BATCH
        for piece in batches(len(tokens), self.llm.n_batch, MIN_BATCH):
            self.llm.eval(list(tokens[piece.start : piece.stop]))
        if exact:
            self.n_exact = self.llm.n_tokens

    def prefill(self, tokens: Sequence[int]) -> None:
        """Evaluate ``tokens`` from an empty cache (the prefix, as its own call)."""
        if len(tokens) >= self.n_ctx:
            raise KVStateError(f"prompt of {len(tokens)} tokens does not fit n_ctx={self.n_ctx}")
        self.clear()
        self._eval(tokens)

    def extend(self, tokens: Sequence[int]) -> None:
        """Evaluate more tokens after what the cache holds."""
        self._eval(tokens)

    def truncate(self, n_tokens: int) -> None:
        """Drop everything after the first ``n_tokens`` positions (back to a cached prefix)."""
        self._c.llama_memory_seq_rm(self._memory(), 0, n_tokens, -1)
        self.llm.n_tokens = n_tokens
        self.n_exact = min(self.n_exact, n_tokens)

    def keep(self, n_tokens: int) -> int:
        """Cut the cache back to its first ``n_tokens`` prompt positions, if llama.cpp really holds
        them; returns how many it kept (0 after clearing it: positions missing, e.g. a
        sliding-window cache that kept only the last ones, or a memory that cannot drop a tail)."""
        mem = self._memory()
        n = min(n_tokens, self.n_exact)
        if n <= 0 or self._c.llama_memory_seq_pos_min(mem, 0) != 0 or self._c.llama_memory_seq_pos_max(mem, 0) < n - 1:
            self.clear()
            return 0
        if not self._c.llama_memory_seq_rm(mem, 0, n, -1):
            self.clear()
            return 0
        self.llm.n_tokens = self.n_exact = n
        return n

    def save_state(self) -> bytes:
        """The raw KV state of sequence 0 (per-sequence API: no logits, only the cache)."""
        size = self._c.llama_state_seq_get_size(self.llm.ctx, 0)
        buf = (ctypes.c_uint8 * size)()
        written = self._c.llama_state_seq_get_data(self.llm.ctx, buf, size, 0)
        return ctypes.string_at(buf, written)  # one copy (slicing a ctypes array makes a list of ints)

    def restore_state(self, state: bytes, tokens: Sequence[int]) -> None:
        """Load a state saved by :meth:`save_state` for ``tokens``; refuses rather than guessing."""
        if len(tokens) >= self.n_ctx:
            raise KVStateError(
                f"the KV state holds {len(tokens)} tokens; this engine's n_ctx={self.n_ctx} is too small"
            )
        self.clear()
        src = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
        if self._c.llama_state_seq_set_data(self.llm.ctx, src, len(state), 0) == 0:
            self.clear()
            raise KVStateError(
                f"llama.cpp refused the KV state: it was saved with another KV type or model, or needs a "
                f"larger context than n_ctx={self.n_ctx} (this engine: kv_type={self.kv_type})"
            )
        if self._c.llama_memory_seq_pos_max(self._memory(), 0) != len(tokens) - 1:
            self.clear()
            raise KVStateError("the KV state does not hold the expected number of tokens")
        self.llm.input_ids[: len(tokens)] = tokens
        self.llm.n_tokens = self.n_exact = len(tokens)

    # --- generation -----------------------------------------------------------------------
    def logits(self) -> np.ndarray:
        """A copy of the next-token logits after the last evaluated token."""
        ptr = self._c.llama_get_logits_ith(self.llm.ctx, -1)
        return np.ctypeslib.as_array(ptr, shape=(self.llm.n_vocab(),)).copy()

    def is_end(self, token: int) -> bool:
        return bool(self._c.llama_vocab_is_eog(self._vocab, token))

    def generate(
        self,
        sampling: Sampling,
        on_text: Callable[[str], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> Generated:
        """Sample up to ``sampling.max_tokens`` tokens after the evaluated prompt.

        ``should_stop`` is polled before each token; once it returns True the generation ends with
        ``finish_reason == "cancelled"`` (the model and its lock are freed for the next caller).
        """
        sampler, tokens, raw = Sampler(sampling), [], b""
        emitted = 0
        finish = "length"
        for _ in range(sampling.max_tokens):
            if should_stop is not None and should_stop():
                finish = "cancelled"
                break
            token = sampler(self.logits())
            if self.is_end(token):
                finish = "stop"
                break
            tokens.append(token)
            raw += self.llm.detokenize([token])
            text = raw.decode("utf-8", errors="ignore")  # a split multi-byte character waits
            if on_text and len(text) > emitted:
                on_text(text[emitted:])
                emitted = len(text)
            if self.llm.n_tokens + 1 >= self.n_ctx:
                break
            self.llm.eval([token])
        return Generated(tokens, raw.decode("utf-8", errors="replace"), finish)


_LOADING = threading.Lock()


def _load(llama_cpp: Any, **kwargs: Any) -> Any:
    """A ``Llama`` without llama.cpp's extra weight buffer types (AMX tiles, repacked weights).

    On a CPU that advertises AMX in a VM that does not enable it, every multi-token batch through
    them crashes the process; without them, too, a state's numerics do not depend on which of
    those kernels the CPU has. ``Llama`` takes no such argument, so its default model parameters
    are amended while it is made.
    """
    module = llama_cpp.llama_cpp
    with _LOADING:
        default = module.llama_model_default_params

        def plain() -> Any:
            params = default()
            params.use_extra_bufts = False
            return params

        module.llama_model_default_params = plain
        try:
            return llama_cpp.Llama(**kwargs)
        finally:
            module.llama_model_default_params = default


def batches(n: int, size: int, minimum: int) -> list[range]:
    """Cut ``n`` tokens into consecutive batches of at most ``size`` and, when ``n`` allows, at
    least ``minimum`` (a short last batch borrows from the one before it; ``size >= 2 * minimum``)."""
    cuts = list(range(0, n, size)) + [n]
    if len(cuts) > 2 and cuts[-1] - cuts[-2] < minimum:
        cuts[-2] = cuts[-1] - minimum
    return [range(a, b) for a, b in zip(cuts, cuts[1:], strict=False) if b > a]


def _raise(message: str) -> None:
    raise TemplateSplitError(f"chat template error: {message}")
