"""Inspector page: chat with an anima on the local model (``local`` extra), one turn per form post,
through the same completion as ``POST /v1/chat/completions``, with each reply's KV outcome (hit/miss).

Each conversation is a session of its own (``ui-<hex>``) read back from its recorded events; a turn
answers with a redirect to that page, so a reload never sends it again.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Annotated

from litestar import Controller, Response, get, post
from litestar.params import FromPath, QueryParameter

from api.deps import RuntimeDep
from api.routes.local_chat import complete_chat
from api.ui.deps import UiUser, UiUserDep, ui_id
from api.ui.forms import Form, see_other, textarea, validated
from api.ui.render import page
from elephantasm.domain.errors import NotFoundError, ValidationError
from elephantasm.local.model import llama_cpp_available
from elephantasm.runtime import Runtime
from elephantasm.schemas.local import ChatCompletionRequest
from elephantasm.services import animas as anima_svc
from elephantasm.services.inspector.chat import chat_turns

CONVERSATION = re.compile(r"ui-[0-9a-f]{32}")
Conversation = Annotated[str | None, QueryParameter(description="The conversation (session) to show.")]


@dataclass
class ChatForm:
    """One turn: the new message in the page's conversation (none yet: a new one)."""

    message: str = ""
    conversation: str = ""


def conversation_id(value: str | None) -> str:
    """A chat page's conversation id as sent, or a new one when none is; 422 for anything else."""
    if not value:
        return f"ui-{uuid.uuid4().hex}"
    if not CONVERSATION.fullmatch(value):
        raise ValidationError("conversation: not a conversation of this page ('ui-' and 32 hex digits)")
    return value


def _available() -> None:
    if not llama_cpp_available():
        raise NotFoundError("the chat page needs the 'local' extra (llama-cpp-python), which is not installed")


async def _chat_page(runtime: Runtime, ui: UiUser, anima_id: str, conversation: str | None) -> Response:
    aid = ui_id("anima", anima_id)
    async with runtime.read_session() as session:
        anima = await anima_svc.get_anima(session, ui.caller.org_id, aid)
        turns = await chat_turns(session, ui.caller.org_id, aid, conversation) if conversation else []
    return page("chat.html", ui=ui, anima=anima, turns=turns, conversation=conversation or "", tab="chat")


class ChatPages(Controller):
    """``/ui/animas/{id}/chat``."""

    path = "/animas/{anima_id:str}/chat"

    @get("/")
    async def chat(
        self, anima_id: FromPath[str], ui: UiUserDep, runtime: RuntimeDep, conversation: Conversation = None
    ) -> Response:
        """A conversation so far (an empty one without ``conversation``)."""
        _available()
        return await _chat_page(runtime, ui, anima_id, conversation_id(conversation) if conversation else None)

    @post("/")
    async def turn(
        self, anima_id: FromPath[str], ui: UiUserDep, runtime: RuntimeDep, data: Annotated[ChatForm, Form]
    ) -> Response:
        """Send the message in its conversation, then show the conversation (303 to its page)."""
        _available()
        aid = ui_id("anima", anima_id)
        said = textarea(data.message).strip()
        if not said:
            raise ValidationError("message: must not be empty")
        conversation = conversation_id(data.conversation)
        async with runtime.read_session() as session:
            turns = await chat_turns(session, ui.caller.org_id, aid, conversation)
        messages = [*({"role": t["role"], "content": t["content"]} for t in turns), {"role": "user", "content": said}]
        req = validated(ChatCompletionRequest, model="local", messages=messages, user=str(aid), temperature=0)
        await complete_chat(runtime, ui.caller.org_id, aid, req, conversation)
        return see_other(f"/ui/animas/{aid}/chat?conversation={conversation}")
