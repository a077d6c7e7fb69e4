"""Facts spread over two or more user turns: the first introduces a subject with one detail, later
ones add details by reference only ("we named him …", "it's at the …"), so answering needs every
part (ER_all) while any one part already counts for ER_any. Each part carries its own value, drawn
from its own pool; the question's ``answer`` is the last part's value."""

from __future__ import annotations

from dataclasses import dataclass

POOLS: dict[str, tuple[str, ...]] = {
    "species": ("ferret", "tortoise", "parakeet", "greyhound", "chinchilla", "hedgehog", "axolotl", "dachshund"),
    "pet name": ("Biscuit", "Pickles", "Noodle", "Waffles", "Mochi", "Pretzel", "Sprocket", "Marmalade"),
    "workplace": (
        "brewery",
        "vineyard",
        "planetarium",
        "bike shop",
        "flower market",
        "ferry company",
        "botanical garden",
        "ski resort",
    ),
    "duty": (
        "payroll",
        "logistics",
        "catering",
        "inventory",
        "social media",
        "customer support",
        "bookkeeping",
        "procurement",
    ),
    "course": ("pottery", "welding", "salsa", "calligraphy", "beekeeping", "woodcarving", "glassblowing", "improv"),
    "car": ("Subaru", "Volvo", "Skoda", "Mazda", "Peugeot", "Saab", "Lancia", "Datsun"),
    "colour": ("teal", "mustard yellow", "burgundy", "olive green", "lilac", "tangerine", "charcoal grey", "seafoam"),
    "room": ("attic", "basement", "pantry", "conservatory", "mudroom", "veranda", "boiler room", "loft"),
    "band": ("Velvet Orchard", "Paper Lanterns", "Static Harbor", "Glass Pilots", "Neon Marsh", "Copper Tides"),
    "venue": ("Roxy Hall", "Granary", "Palladium", "Old Mill", "Crystal Ballroom", "Foundry"),
}


@dataclass(frozen=True)
class Spread:
    """A fact told in parts: ``parts[k]`` are alternative phrasings of part k (``{val}`` from ``pools[k]``)."""

    name: str
    pools: tuple[str, ...]
    parts: tuple[tuple[str, ...], ...]
    questions: tuple[str, ...]
    echoes: tuple[str, ...] = ()


SPREADS: tuple[Spread, ...] = (
    Spread(
        "partner's job",
        ("workplace", "duty"),
        (
            (
                "My partner got the job!! They start at a {val} next month.",
                "Big news, my partner just got hired by a {val}.",
            ),
            (
                "Oh and they'll be handling {val} there, perfect for them.",
                "Forgot to say, it's a {val} role, not what they expected.",
            ),
        ),
        (
            "Where will the user's partner work, and doing what?",
            "What is the partner's new job and what will they be in charge of?",
        ),
        ("My partner has been job hunting for months, it's exhausting for both of us.",),
    ),
    Spread(
        "pet",
        ("species", "pet name"),
        (
            ("We finally adopted a {val} from the shelter.", "So we brought home a {val} today, no regrets."),
            ("We named him {val}, he already owns the couch.", "The little guy is called {val} by the way."),
        ),
        (
            "What pet did the user adopt, and what is its name?",
            "What animal did the user bring home and what did they call it?",
        ),
        ("Thinking about getting a pet, is that crazy?", "My neighbour's cat keeps sitting on our windowsill."),
    ),
    Spread(
        "trip",
        ("city", "date"),
        (
            ("Booked a trip to {val} for the spring!", "We're finally doing the {val} trip this year."),
            ("Flights are sorted, we leave on {val}.", "Departure is {val}, the cheapest day we found."),
        ),
        (
            "Where is the user travelling, and when do they leave?",
            "Which city is the user visiting and on what date do they depart?",
        ),
        ("I really need a holiday somewhere warm.",),
    ),
    Spread(
        "class",
        ("course", "name"),
        (
            (
                "Signed up for a {val} class at the community centre.",
                "Starting a {val} course on Tuesdays, wish me luck.",
            ),
            ("The instructor is called {val}, she's hilarious.", "Our teacher, {val}, used to do it professionally."),
        ),
        (
            "What class did the user sign up for, and who teaches it?",
            "Which course is the user taking and who is the instructor?",
        ),
        ("I want to learn something hands-on this year.",),
    ),
    Spread(
        "car",
        ("car", "colour"),
        (
            ("Bought a used {val} off a guy from work.", "Picked up a secondhand {val} at the weekend."),
            (
                "It's {val}, which I'd never have chosen, but it grew on me.",
                "The paint is {val}, you can spot it from a mile away.",
            ),
        ),
        ("What car did the user buy, and what colour is it?", "Which make of car did the user get and in what colour?"),
        ("Public transport here keeps getting worse.",),
    ),
    Spread(
        "renovation",
        ("room", "name"),
        (
            ("We're redoing the {val} this summer.", "Finally gutting the {val}, it's been a mess for years."),
            ("The contractor, {val}, starts on Monday.", "Hired a builder called {val} to do it."),
        ),
        (
            "Which room is the user renovating, and who is doing the work?",
            "What part of the house is being redone and by which builder?",
        ),
        ("Our house needs so much work, I don't know where to start.",),
    ),
    Spread(
        "concert",
        ("band", "venue", "date"),
        (
            ("Got tickets to see {val} live!!", "Managed to grab two tickets for {val}, can't believe it."),
            ("It's at the {val}, standing only.", "Venue is the {val}, never been there."),
            ("Show's on {val}, already counting down.", "The gig is on {val}, taking the day after off."),
        ),
        (
            "Which band is the user seeing live, where, and on what date?",
            "What concert does the user have tickets for, at which venue and when?",
        ),
        ("I haven't been to a gig in ages.",),
    ),
)
