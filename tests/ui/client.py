"""Signing in to the inspector over plain HTTP (httpx), the way a browser form post does."""

from __future__ import annotations

import re

import httpx

TOKEN = re.compile(r'name="token" value="([^"]+)"')
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def hidden(pattern: re.Pattern[str], html: str) -> str:
    """The value of a hidden form field."""
    found = pattern.search(html)
    assert found, f"no {pattern.pattern!r} in page"
    return found.group(1)


async def sign_in(client: httpx.AsyncClient, api_key: str, next_path: str = "") -> httpx.Response:
    """Open the sign-in form (gets its cookie and token) and post the key; returns the POST response."""
    form = await client.get("/ui/login", params={"next": next_path} if next_path else None)
    assert form.status_code == 200, form.text
    data = {"api_key": api_key, "token": hidden(TOKEN, form.text), "next": next_path}
    return await client.post("/ui/login", data=data)
