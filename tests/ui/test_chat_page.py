"""The chat page is absent without the ``local`` extra. The chat itself, on the real local model, is
tested in ``tests/local/test_ui_chat.py``; a conversation id is checked like any other input."""

from __future__ import annotations

import httpx
import pytest

from api.ui.chat_routes import conversation_id
from elephantasm.domain.errors import ValidationError
from elephantasm.local.model import llama_cpp_available
from tests.ui.client import sign_in
from tests.ui.conftest import World


@pytest.mark.skipif(llama_cpp_available(), reason="the local extra is installed: the chat page exists")
async def test_without_the_local_extra_there_is_no_chat_page(browser_like: httpx.AsyncClient, world: World) -> None:
    await sign_in(browser_like, world.owner.api_key)
    a = f"/ui/animas/{world.seeded.anima_id}"
    assert f'href="{a}/chat"' not in (await browser_like.get(a)).text
    assert (await browser_like.get(f"{a}/chat")).status_code == 404


@pytest.mark.parametrize("value", ["ui-x", "chat-" + "0" * 32, "ui-" + "0" * 33, "../ui-" + "0" * 32])
def test_a_conversation_id_not_of_the_chat_page_is_a_422_naming_it(value: str) -> None:
    with pytest.raises(ValidationError) as caught:
        conversation_id(value)
    assert "conversation" in str(caught.value.detail)


def test_no_conversation_id_starts_a_new_one() -> None:
    first, second = conversation_id(""), conversation_id(None)
    assert first != second and conversation_id(first) == first
