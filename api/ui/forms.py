"""What the inspector's form posts share: the url-encoded body marker, the answer (303 to a page),
and the API's own schemas applied to form fields (a broken rule is a 422 naming the field)."""

from __future__ import annotations

from typing import Any, TypeVar

import pydantic
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.response import Redirect

from api.ui.render import SECURITY_HEADERS
from elephantasm.domain.errors import ValidationError

M = TypeVar("M", bound=pydantic.BaseModel)

Form = Body(media_type=RequestEncodingType.URL_ENCODED)
"""``Annotated[SomeForm, Form]``: a handler's url-encoded form body."""


def see_other(url: str) -> Redirect:
    """The answer to a form post: go to ``url`` (303, so a reload never posts again)."""
    return Redirect(url, status_code=303, headers=SECURITY_HEADERS)


def textarea(value: str) -> str:
    """A textarea's value as typed: browsers send its line breaks as CRLF."""
    return value.replace("\r\n", "\n")


def validated(schema: type[M], /, **fields: Any) -> M:
    """``fields`` checked by the API's schema for the same action; ValidationError (422) naming each
    field that breaks a rule."""
    try:
        return schema.model_validate(fields)
    except pydantic.ValidationError as exc:
        problems = [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]
        raise ValidationError("; ".join(problems)) from None
