"""Resource groups of the clients (one module per API area, sync and async side by side)."""

from .animas import Animas, AsyncAnimas
from .dreams import AsyncDreams, Dreams
from .events import AsyncEvents, Events
from .identity import AsyncIdentityResource, IdentityResource
from .keys import AsyncKeys, Keys
from .knowledge import AsyncKnowledgeResource, KnowledgeResource
from .memories import AsyncMemories, Memories
from .packs import AsyncPacks, Packs

__all__ = [
    "Animas",
    "AsyncAnimas",
    "AsyncDreams",
    "AsyncEvents",
    "AsyncIdentityResource",
    "AsyncKeys",
    "AsyncKnowledgeResource",
    "AsyncMemories",
    "AsyncPacks",
    "Dreams",
    "Events",
    "IdentityResource",
    "Keys",
    "KnowledgeResource",
    "Memories",
    "Packs",
]
