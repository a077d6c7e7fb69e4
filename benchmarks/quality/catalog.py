"""Vocabulary of the conversation generator: fact slots, value pools and distractor chatter.

Values are distinctive words and names so that a value appears only where the generator put it
(the generator checks this); assistant replies never repeat a value, so the user's statement is
the one event that carries it. Phrasings vary on purpose: some state a fact plainly ("I live in
X"), others only imply it ("life here in X"), and questions paraphrase rather than quote.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Slot:
    """One plantable fact. ``{val}`` is the value; ``echoes`` are user turns about the same subject
    that do not give the value (people keep talking about their boss without naming them)."""

    kind: str
    x: str
    pool: str
    statements: tuple[str, ...]
    questions: tuple[str, ...]
    updates: tuple[str, ...] = ()
    updated_questions: tuple[str, ...] = ()
    echoes: tuple[str, ...] = ()

    @property
    def updatable(self) -> bool:
        return bool(self.updates)


POOLS: dict[str, tuple[str, ...]] = {
    "drink": ("matcha", "espresso", "rooibos", "kombucha", "chai", "horchata", "yerba mate", "kefir"),
    "cuisine": ("Ethiopian", "Georgian", "Peruvian", "Sichuan", "Lebanese", "Oaxacan", "Keralan", "Basque"),
    "music": ("bossa nova", "synthwave", "bluegrass", "afrobeat", "shoegaze", "klezmer", "zydeco", "dub techno"),
    "sport": ("bouldering", "squash", "rowing", "fencing", "badminton", "curling", "orienteering", "handball"),
    "author": (
        "Ursula Le Guin",
        "Octavia Butler",
        "Italo Calvino",
        "Wislawa Szymborska",
        "Chinua Achebe",
        "Clarice Lispector",
        "Stanislaw Lem",
        "Tove Jansson",
    ),
    "game": ("Wingspan", "Carcassonne", "Azul", "Terraforming Mars", "Catan", "Dixit", "Hanabi", "Patchwork"),
    "name": (
        "Priya",
        "Tomasz",
        "Ingrid",
        "Mateo",
        "Yusuf",
        "Keiko",
        "Olamide",
        "Siobhan",
        "Dmitri",
        "Anneliese",
        "Rafael",
        "Thandiwe",
        "Bjorn",
        "Leilani",
        "Casimir",
        "Esperanza",
        "Oisin",
        "Margarethe",
        "Kwame",
        "Svetlana",
        "Ignatius",
        "Rosalind",
        "Takeshi",
        "Ximena",
    ),
    "city": (
        "Porto",
        "Tallinn",
        "Ljubljana",
        "Valparaiso",
        "Hobart",
        "Leipzig",
        "Kyoto",
        "Bergen",
        "Asheville",
        "Trieste",
        "Gdansk",
        "Cuenca",
        "Dunedin",
        "Bordeaux",
        "Tbilisi",
        "Halifax",
    ),
    "company": (
        "Northwind Labs",
        "Bluefin Analytics",
        "Copperleaf Studio",
        "Halcyon Robotics",
        "Marigold Health",
        "Quillfeather Press",
        "Tidewater Energy",
        "Brightwave Systems",
    ),
    "date": tuple(
        f"{m} {d}"
        for m in ("March", "April", "June", "July", "September", "October", "November")
        for d in (2, 5, 9, 13, 17, 21, 26)
    ),
}


def _preference(thing: str, pool: str) -> Slot:
    return Slot(
        "preference",
        thing,
        pool,
        (
            f"Honestly, my favorite {thing} is {{val}}. Nothing else even comes close for me.",
            f"I've gotten really into {{val}} lately; it's easily my go-to {thing} now.",
            f"If I had to pick just one {thing}, it would be {{val}}, no contest.",
        ),
        (f"What is the user's favorite {thing}?", f"Which {thing} does the user like best?"),
        (
            f"My taste has changed a lot recently: {{val}} is my favorite {thing} these days.",
            f"Funny thing, I've completely switched my go-to {thing} to {{val}}.",
        ),
        (f"What is the user's favorite {thing} now?", f"Which {thing} does the user like best these days?"),
        (
            f"I've been thinking about trying a different {thing} this month.",
            f"Any tips for getting into a new {thing}? I like variety.",
            f"My friends and I argued about the best {thing} for an hour, nobody won.",
            f"I read an article ranking every {thing} imaginable, it was silly.",
        ),
    )


def _person(rel: str, changeable: bool) -> Slot:
    updates = (
        (
            f"Quick update: I have a new {rel} now, {{val}}, and so far so good.",
            f"Things changed at last, {{val}} is my {rel} from now on.",
        )
        if changeable
        else ()
    )
    return Slot(
        "person",
        rel,
        "name",
        (
            f"My {rel} {{val}} called me last night and we talked for two hours.",
            f"By the way, my {rel}'s name is {{val}}, in case I mention them again.",
            f"I'm grabbing dinner with {{val}} tonight, my {rel}, really looking forward to it.",
        ),
        (f"What is the name of the user's {rel}?", f"Who is the user's {rel}?"),
        updates,
        (f"Who is the user's {rel} now?", f"What is the name of the user's current {rel}?"),
        (
            f"I need a gift idea for my {rel}, something thoughtful.",
            f"Had a slightly awkward conversation with my {rel} earlier.",
            f"My {rel} recommended a podcast about history, any similar ones?",
            f"I should call my {rel} more often, honestly.",
        ),
    )


def _plan(event: str) -> Slot:
    return Slot(
        "plan",
        event,
        "date",
        (
            f"My {event} is on {{val}}, so I need to start preparing.",
            f"Mark your calendar: the {event} is happening on {{val}}.",
            f"I've finally scheduled the {event} for {{val}}.",
        ),
        (f"When is the user's {event}?", f"What date is the user's {event}?"),
        (f"The {event} got moved, it is now on {{val}}.", f"Change of plans: the {event} was rescheduled to {{val}}."),
        (f"When is the user's {event} now?", f"What is the new date of the user's {event}?"),
        (
            f"I'm a bit nervous about the {event}, honestly.",
            f"I still need to prepare a lot for the {event}.",
            f"Can you help me make a checklist for the {event}?",
            f"Someone asked me about the {event} today and I blanked.",
        ),
    )


SLOTS: tuple[Slot, ...] = (
    _preference("drink", "drink"),
    _preference("cuisine", "cuisine"),
    _preference("kind of music", "music"),
    _preference("sport", "sport"),
    _preference("author", "author"),
    _preference("board game", "game"),
    _person("sister", False),
    _person("brother", False),
    _person("best friend", False),
    _person("boss", True),
    _person("dentist", True),
    _person("landlord", True),
    _person("piano teacher", True),
    Slot(
        "place",
        "home",
        "city",
        (
            "I live in {val}, right by the old harbour.",
            "Life here in {val} is pretty quiet, which I love.",
            "I've been renting a small flat in {val} for a few years now.",
        ),
        ("Which city does the user live in?", "Where is the user based?"),
        (
            "Big news: I just moved to {val} and I'm still unpacking boxes.",
            "I finally relocated to {val}, new apartment and everything.",
        ),
        ("Which city does the user live in now?", "Where is the user based these days?"),
        (
            "The rent in my city keeps going up, it's frustrating.",
            "My neighbourhood just got a new bakery.",
            "I want to explore more of the city I live in this spring.",
        ),
    ),
    Slot(
        "place",
        "hometown",
        "city",
        (
            "I grew up in {val}, a small place where everybody knows everybody.",
            "Back in {val}, where I was raised, winters were brutal.",
        ),
        ("Where did the user grow up?", "What is the user's hometown?"),
        (),
        (),
        (
            "I miss the food from the town where I grew up.",
            "Thinking about visiting my hometown this year.",
            "My hometown friends have a group chat that never sleeps.",
        ),
    ),
    Slot(
        "place",
        "employer",
        "company",
        (
            "I work at {val} as a data engineer.",
            "My job at {val} keeps me busy, mostly backend work.",
            "Over at {val} we ship a release every two weeks, it's intense.",
        ),
        ("Which company does the user work for?", "Who is the user's employer?"),
        ("I accepted an offer and started at {val} this week.", "I changed jobs: my new employer is {val}."),
        ("Which company does the user work for now?", "Who is the user's employer now?"),
        (
            "My company is doing a reorg again, nobody knows what's happening.",
            "I might ask for a raise at work next quarter.",
            "The office coffee machine at work broke again.",
        ),
    ),
    _plan("conference trip"),
    _plan("half marathon"),
    _plan("driving test"),
    _plan("thesis defense"),
    _plan("housewarming party"),
    _plan("cousin's wedding"),
)

# Assistants talk more than users: every reply gets one or two of these after its first sentence.
ELABORATIONS: tuple[str, ...] = (
    "If you want, I can go into more detail on any part of this, or suggest a few alternatives to compare.",
    "A small first step usually makes the rest feel much easier, so pick the piece that takes five minutes.",
    "It also helps to write down what worked and what did not, so next time you can skip the guesswork.",
    "Many people find that setting a gentle reminder on their phone keeps these things from slipping.",
    "There is no single right answer here; it depends on your schedule, your energy and what you enjoy.",
    "Let me know how it goes, and we can adjust the plan together if something feels off.",
    "One more idea: ask someone you trust for their take, a second opinion often clarifies things.",
    "Try not to aim for perfect on the first attempt; a rough version you can improve beats nothing.",
    "If time is tight this week, it is fine to postpone part of it and focus on the essentials first.",
    "I can also put together a short summary or checklist you can keep for later reference.",
)

ECHO_REPLIES: tuple[str, ...] = (
    "That makes sense. Want to talk it through?",
    "I hear you. What would make it easier?",
    "Interesting, tell me more if you like.",
    "Fair enough. I'm happy to help with that.",
)

ACKS: dict[str, tuple[str, ...]] = {
    "preference": (
        "Noted! It's always nice to hear what you enjoy.",
        "That sounds great, thanks for telling me.",
        "Good taste. I'll keep that in mind when we talk about it again.",
    ),
    "person": (
        "It sounds like you two are close. How are they doing?",
        "That's lovely, thanks for sharing that.",
        "Good to know who's who. Say hi from me!",
    ),
    "place": (
        "That sounds like a nice setup. How do you like it so far?",
        "Thanks for the context, that helps.",
        "Interesting! What do you like most about it?",
    ),
    "plan": (
        "Got it, I'll remember that. Do you need help getting ready?",
        "Noted. Want me to help you plan for it?",
        "Sounds exciting. Let me know if you want a checklist.",
    ),
    "update": (
        "Thanks for the update, I'll keep the new details in mind.",
        "Understood, I've got the change.",
        "Okay, good to know things have changed.",
    ),
    "spread": (
        "Oh, exciting! How do you feel about it?",
        "That's great news, thanks for telling me.",
        "Nice, I'd love to hear more as it comes together.",
    ),
}

FILL: dict[str, tuple[str, ...]] = {
    "dish": ("lentil soup", "banana bread", "vegetable stir fry", "mushroom risotto", "shakshuka", "pancakes"),
    "task": ("a cover letter", "a thank-you note", "a project update", "a complaint email", "a birthday card"),
    "lang": ("Python", "SQL", "JavaScript", "Rust", "Bash"),
    "bug": ("an off-by-one error", "a timezone bug", "a flaky test", "a memory leak", "a slow query"),
    "show": ("a nature documentary", "a cooking competition", "a detective series", "a space drama"),
    "chore": ("laundry", "the dishes", "vacuuming", "watering the plants", "sorting the mail"),
    "weather": ("rainy", "windy", "freezing", "humid", "foggy", "sunny"),
}

# (user, assistant) pairs of everyday chatter; some reuse a slot's words (x) without its value.
CHATTER: tuple[tuple[str, str], ...] = (
    (
        "Can you give me a quick recipe for {dish}? I have about {n} minutes.",
        "Sure. Keep it simple: prep everything first, cook on medium heat, and taste as you go. It fits in {n} minutes.",
    ),
    (
        "Help me write {task}, something short and friendly.",
        "Here's a draft: open with thanks, state the main point in one sentence, and close warmly.",
    ),
    (
        "I'm stuck on {bug} in my {lang} code, any ideas?",
        "Try reproducing it with the smallest input, add logging around the boundary, and check your assumptions.",
    ),
    (
        "It's {weather} again today, I don't feel like going outside.",
        "Days like that are perfect for an indoor plan. Maybe a book, or some stretching?",
    ),
    (
        "I watched {show} last night, it was better than expected.",
        "Nice! What did you like about it? I can suggest something similar.",
    ),
    (
        "I've been putting off {chore} for {n} days now.",
        "Try the two-minute rule: start with just a tiny part and momentum usually follows.",
    ),
    ("How many cups are in a liter, roughly?", "About four cups, a little more than four US cups in fact."),
    (
        "What's a good way to stay focused in the afternoon?",
        "Short breaks, a walk, water, and one clear task per block of time help most people.",
    ),
    (
        "Can you explain what a hash map is in simple terms?",
        "It's like a coat check: you hand over a key, get a slot, and find your item again instantly.",
    ),
    (
        "I slept badly, I woke up {n} times last night.",
        "Sorry to hear that. Go easy today and try to get to bed early.",
    ),
    ("My {x} keeps sending me funny videos, it's a whole thing.", "Ha, that sounds like a fun kind of chaos."),
    ("I was thinking about my {x} today, nothing in particular.", "It's nice when people just come to mind."),
    (
        "I keep meaning to sort out my calendar, everything feels last minute.",
        "A weekly ten-minute review of the calendar can take a lot of that stress away.",
    ),
    ("Work has been hectic, {n} meetings back to back.", "That's a lot. Can any of them become an email?"),
    (
        "Do you have tips for remembering people's names?",
        "Repeat the name once, link it to an image, and write it down later.",
    ),
    ("I'm trying to drink more water during the day.", "Keep a bottle in sight and refill it at fixed times."),
)
