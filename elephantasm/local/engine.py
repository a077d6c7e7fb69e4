"""The llama.cpp adapter: one loaded GGUF model and its context (sequence 0).

Not thread-safe (llama.cpp contexts are not): callers hold :attr:`LocalEngine.lock` around any
sequence of calls (restore → prefill → generate) and run them off the event loop.

Identical output after a restore needs the same call shape on every path (platform notes): the
prefix is always evaluated as its own call and prefix and suffix are tokenized separately; the
prefix line by line, which also gives every pack line a known token range (item-aware pruning).
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from elephantasm.domain.kv.ranges import ItemSpan, line_offsets, split_lines
from elephantasm.local.errors import KVStateError, TemplateSplitError
from elephantasm.local.model import file_sha256
from elephantasm.local.sampling import Sampler, Sampling

KV_TYPES = ("f16", "q8_0")
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

    def __init__(self, path: Path, *, n_ctx: int = 4096, n_threads: int = 1, kv_type: str = "f16") -> None:
        import llama_cpp
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        if kv_type not in KV_TYPES:
            raise KVStateError(f"kv_type: {kv_type!r} is not one of {', '.join(KV_TYPES)}")
        kwargs: dict[str, Any] = {}
        if kv_type == "q8_0":  # a quantised V cache needs flash attention in llama.cpp
            kwargs = {"type_k": llama_cpp.GGML_TYPE_Q8_0, "type_v": llama_cpp.GGML_TYPE_Q8_0, "flash_attn": True}
        self._c = llama_cpp
        self.llm = llama_cpp.Llama(
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

    def split_prompt(self, system: str, turns: Sequence[dict[str, str]]) -> tuple[str, str]:
        """(prefix, suffix): the system turn alone, and the rest up to the assistant's cue."""
        prefix = self._render([{"role": "system", "content": system}], False)
        full = self._render([{"role": "system", "content": system}, *turns], True)
        if not full.startswith(prefix):
            raise TemplateSplitError("the model's chat template does not keep the system turn as a stable prefix")
        return prefix, full[len(prefix) :]

    def tokenize_prefix(self, prefix: str) -> tuple[list[int], list[str], list[int]]:
        """(tokens, lines, line start offsets) of a prefix, tokenized line by line."""
        lines = split_lines(prefix)
        tokens, starts = line_offsets(
            lines, lambda line, i: self.llm.tokenize(line.encode(), add_bos=(i == 0), special=True)
        )
        return tokens, lines, starts

    def tokenize_suffix(self, suffix: str) -> list[int]:
        return self.llm.tokenize(suffix.encode(), add_bos=False, special=True)

    # --- KV state -------------------------------------------------------------------------
    def _memory(self) -> Any:
        return self._c.llama_get_memory(self.llm.ctx)

    def clear(self) -> None:
        self._c.llama_memory_clear(self._memory(), True)
        self.llm.n_tokens = 0

    def prefill(self, tokens: Sequence[int]) -> None:
        """Evaluate ``tokens`` from an empty cache (the prefix, as its own call)."""
        if len(tokens) >= self.n_ctx:
            raise KVStateError(f"prompt of {len(tokens)} tokens does not fit n_ctx={self.n_ctx}")
        self.clear()
        self.llm.eval(list(tokens))

    def extend(self, tokens: Sequence[int]) -> None:
        """Evaluate more tokens after what the cache holds."""
        if self.llm.n_tokens + len(tokens) >= self.n_ctx:
            raise KVStateError(f"prompt of {self.llm.n_tokens + len(tokens)} tokens does not fit n_ctx={self.n_ctx}")
        self.llm.eval(list(tokens))

    def truncate(self, n_tokens: int) -> None:
        """Drop everything after the first ``n_tokens`` positions (back to a cached prefix)."""
        self._c.llama_memory_seq_rm(self._memory(), 0, n_tokens, -1)
        self.llm.n_tokens = n_tokens

    def save_state(self) -> bytes:
        """The raw KV state of sequence 0 (per-sequence API: no logits, only the cache)."""
        size = self._c.llama_state_seq_get_size(self.llm.ctx, 0)
        buf = (ctypes.c_uint8 * size)()
        written = self._c.llama_state_seq_get_data(self.llm.ctx, buf, size, 0)
        return bytes(buf[:written])

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
        self.llm.n_tokens = len(tokens)

    def prune(self, spans_desc: Sequence[ItemSpan]) -> list[int]:
        """Remove item ranges (highest position first) and shift later positions down; returns the
        token ids the cache now holds."""
        mem = self._memory()
        tokens = self.llm.input_ids[: self.llm.n_tokens].tolist()
        for span in spans_desc:
            self._c.llama_memory_seq_rm(mem, 0, span.start, span.end)
            self._c.llama_memory_seq_add(mem, 0, span.end, -1, -span.n_tokens)
            del tokens[span.start : span.end]
        self.llm.input_ids[: len(tokens)] = tokens
        self.llm.n_tokens = len(tokens)
        return tokens

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


def _raise(message: str) -> None:
    raise TemplateSplitError(f"chat template error: {message}")
