"""A small chat agent with long-term memory.

Before each turn it injects the anima's memory pack into the system prompt; after the turn it
extracts the user's and the assistant's messages. Works with any OpenAI-compatible chat endpoint.

Environment:
    ELEPHANTASM_API_KEY    key for the Elephantasm server (required)
    ELEPHANTASM_ENDPOINT   server URL (default http://127.0.0.1:8000)
    ELEPHANTASM_ANIMA_ID   the agent's anima; if unset, one is created and its id printed
    OPENAI_BASE_URL        chat endpoint (default: OpenAI's), e.g. http://localhost:11434/v1
    OPENAI_API_KEY         key for it (default "not-needed", for local servers)
    OPENAI_MODEL           model name (default gpt-4o-mini)

Run:
    python examples/agent_loop.py                  # interactive; Ctrl-D or "exit" quits
    python examples/agent_loop.py --once "Hello!"  # one turn, then exit
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid

from openai import OpenAI

from elephantasm_sdk import Elephantasm, EventType, MemoryPack

SYSTEM_PROMPT = "You are a helpful assistant with a long-term memory of past conversations."
HISTORY_TURNS = 6  # recent turns kept verbatim; older ones live in the memory pack


def system_prompt(pack: MemoryPack | None) -> str:
    """The system prompt with the memory pack appended (when the anima has one yet)."""
    memory = pack.as_prompt() if pack else ""
    return f"{SYSTEM_PROMPT}\n\n{memory}" if memory else SYSTEM_PROMPT


class Agent:
    """One conversation (session) of one anima."""

    def __init__(self, memory: Elephantasm, llm: OpenAI, model: str, anima_id: str) -> None:
        self.memory, self.llm, self.model, self.anima_id = memory, llm, model, anima_id
        self.session_id = f"chat-{uuid.uuid4().hex[:12]}"
        self.history: list[dict[str, str]] = []

    def turn(self, user_text: str) -> str:
        """Inject, answer, extract; returns the assistant's reply."""
        pack = self.memory.inject(self.anima_id, query=user_text)
        messages = [{"role": "system", "content": system_prompt(pack)}]
        messages += self.history[-2 * HISTORY_TURNS :]
        messages.append({"role": "user", "content": user_text})
        completion = self.llm.chat.completions.create(model=self.model, messages=messages)
        reply = completion.choices[0].message.content or ""
        common = {"anima_id": self.anima_id, "session_id": self.session_id}
        self.memory.extract(EventType.MESSAGE_IN, user_text, role="user", author="user", **common)
        self.memory.extract(EventType.MESSAGE_OUT, reply, role="assistant", author=self.model, **common)
        self.history += [{"role": "user", "content": user_text}, {"role": "assistant", "content": reply}]
        return reply


def resolve_anima(memory: Elephantasm) -> str:
    """ELEPHANTASM_ANIMA_ID, or a freshly created anima."""
    if memory.anima_id:
        return memory.anima_id
    anima = memory.create_anima("agent-loop", description="examples/agent_loop.py")
    print(f"Created anima {anima.id}; set ELEPHANTASM_ANIMA_ID={anima.id} to keep its memory.", file=sys.stderr)
    return str(anima.id)


def main(argv: list[str] | None = None) -> int:
    """Entry point; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--once", metavar="MESSAGE", help="send one message and exit")
    args = parser.parse_args(argv)
    llm = OpenAI(base_url=os.environ.get("OPENAI_BASE_URL"), api_key=os.environ.get("OPENAI_API_KEY", "not-needed"))
    with Elephantasm() as memory:
        agent = Agent(memory, llm, os.environ.get("OPENAI_MODEL", "gpt-4o-mini"), resolve_anima(memory))
        if args.once is not None:
            print(agent.turn(args.once))
            return 0
        while True:
            try:
                text = input("you> ").strip()
            except EOFError:
                return 0
            if text.lower() in {"exit", "quit"}:
                return 0
            if text:
                print(f"agent> {agent.turn(text)}")


if __name__ == "__main__":
    raise SystemExit(main())
