"""Vocabulary of noisy, real-chat style sessions: short messages, slang, typos, lowercase, several
threads interleaved. ``roughen`` turns a tidy sentence into a chat message without touching the
values it must keep (the dataset's answers stay findable as whole words)."""

from __future__ import annotations

import random
import re

# Short threads of everyday chat ("u": user, "a": assistant), with ``catalog.FILL`` placeholders.
THREADS: tuple[tuple[tuple[str, str], ...], ...] = (
    (
        ("u", "ugh train delayed again"),
        ("a", "how long this time"),
        ("u", "like {n}0 min, standing on the platform freezing"),
        ("a", "thats rough, got a podcast at least?"),
    ),
    (
        ("u", "what should i make tonight, fridge is basically empty"),
        ("a", "eggs? pasta?"),
        ("u", "theres half an onion and some rice"),
        ("a", "fried rice then, easy"),
    ),
    (
        ("u", "skipped the gym again lol"),
        ("a", "one day off is fine"),
        ("u", "its been {n} days"),
        ("a", "ok thats a streak of a different kind"),
    ),
    (
        ("u", "my {lang} script keeps dying, i think its {bug}"),
        ("a", "share the error?"),
        ("u", "nvm found it, missing comma"),
        ("a", "classic"),
    ),
    (("u", "started {show}"), ("a", "any good?"), ("u", "ep 3 was wild"), ("a", "no spoilers pls")),
    (("u", "so {weather} out today"), ("a", "stay in then"), ("u", "cant, errands"), ("a", "rip")),
    (("u", "been avoiding {chore} for {n} days"), ("a", "just do 5 min of it"), ("u", "fine. tomorrow")),
    (("u", "couldnt sleep at all"), ("a", "again? no screens before bed maybe"), ("u", "easier said than done")),
    (("u", "my {x} texted me at 6am about nothing"), ("a", "lol why"), ("u", "no idea, typical")),
    (("u", "need new headphones mine died"), ("a", "over ear or earbuds"), ("u", "earbuds prob, for the commute")),
    (("u", "weekend plans?"), ("a", "nothing yet, maybe a walk"), ("u", "if it doesnt rain"), ("a", "fingers crossed")),
    (("u", "made {dish} and burned it"), ("a", "how do u burn that"), ("u", "talent honestly")),
    (
        ("u", "have to write {task} and i keep procrastinating"),
        ("a", "write the worst version first"),
        ("u", "ok that actually helps"),
    ),
    (("u", "{n} meetings today, brain is mush"), ("a", "take a real lunch break"), ("u", "whats a lunch break")),
    (("u", "phone battery dies by noon now"), ("a", "battery saver on?"), ("u", "yeah still")),
    (("u", "the neighbours are drilling again"), ("a", "at this hour??"), ("u", "every single morning")),
)

# Short replies to a user's news (never repeating a value).
ACKS: tuple[str, ...] = (
    "oh nice",
    "wait really??",
    "haha love that",
    "ok noted",
    "no way",
    "ooh tell me more",
    "thats big",
    "good to know",
    "omg",
    "wow ok",
    "makes sense",
    "nice one",
)
# Short replies to a passing mention (an echo of a fact's subject, no news in it).
ECHO_ACKS: tuple[str, ...] = (
    "hmm",
    "fair",
    "same honestly",
    "why tho",
    "oh?",
    "depends",
    "good q",
    "ha, relatable",
    "ugh yeah",
    "go for it",
)

SLANG: tuple[tuple[str, str], ...] = (
    (r"\bi don'?t know\b", "idk"),
    (r"\bto be honest\b", "tbh"),
    (r"\bby the way\b", "btw"),
    (r"\bgoing to\b", "gonna"),
    (r"\bwant to\b", "wanna"),
    (r"\bgot to\b", "gotta"),
    (r"\byou\b", "u"),
    (r"\byour\b", "ur"),
    (r"\bare\b", "r"),
    (r"\bbecause\b", "cuz"),
    (r"\breally\b", "rly"),
    (r"\bprobably\b", "prob"),
    (r"\bthough\b", "tho"),
    (r"\btonight\b", "tonite"),
    (r"\bokay\b", "ok"),
    (r"\bplease\b", "pls"),
    (r"\bthanks\b", "thx"),
    (r"\bpeople\b", "ppl"),
    (r"\bsomething\b", "smth"),
    (r"\babout\b", "abt"),
    (r"\bi'm\b", "im"),
    (r"\bi've\b", "ive"),
)
TAGS: tuple[str, ...] = (" lol", " tbh", " haha", " ngl", " lmao", " fr")
SLANG_P, APOSTROPHE_P, TYPO_P, TAG_P = 0.7, 0.6, 0.06, 0.2
_WORD = re.compile(r"[a-z]{4,}")


def _typo(rng: random.Random, word: str) -> str:
    """One keyboard slip: swap two inner letters, drop one, or double one."""
    i = rng.randrange(1, len(word) - 1)
    how = rng.randrange(3)
    if how == 0:
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if how == 1:
        return word[:i] + word[i + 1 :]
    return word[:i] + word[i] + word[i:]


def _rough_words(rng: random.Random, text: str) -> str:
    text = text.lower()
    for pattern, short in SLANG:
        if rng.random() < SLANG_P:
            text = re.sub(pattern, short, text)
    if rng.random() < APOSTROPHE_P:  # a leading one follows a kept value ("X's"): dropping it would glue "s" on
        text = text[:1] + text[1:].replace("'", "")
    return _WORD.sub(lambda m: _typo(rng, m.group()) if rng.random() < TYPO_P else m.group(), text)


def roughen(rng: random.Random, text: str, keep: tuple[str, ...] = ()) -> str:
    """``text`` as a quick chat message: lowercase, slang, dropped apostrophes, the odd typo, no final
    full stop, sometimes a trailing tag; each string in ``keep`` survives intact (lowercased)."""
    pieces = re.split("(" + "|".join(re.escape(k) for k in keep) + ")", text, flags=re.IGNORECASE) if keep else [text]
    out = "".join(p.lower() if n % 2 else _rough_words(rng, p) for n, p in enumerate(pieces))
    out = out.rstrip(".").strip()
    return out + rng.choice(TAGS) if rng.random() < TAG_P else out
