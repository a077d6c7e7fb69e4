"""Paraphrase catalogue: for each fact slot of ``catalog.SLOTS`` (keyed by ``Slot.x``), statements
that imply the fact without naming it, and questions that ask for it in other words (synonyms,
hypernyms, other constructions). No question shares a content word with any statement of its
slot (``words.shared_content_words``; checked by the generator and the tests), so only meaning,
never vocabulary, links a ``paraphrase`` question to its evidence."""

from __future__ import annotations

# slot.x → (statements with {val}, questions)
PARAPHRASES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "drink": (
        (
            "Nothing beats a hot mug of {val} first thing after I wake up.",
            "I'm hooked on {val}, I get through three glasses of it a day.",
            "Made myself a big pot of {val} and finished it before noon.",
        ),
        ("Which beverage does the user enjoy most?", "What does the user prefer to sip?"),
    ),
    "cuisine": (
        (
            "Whenever we eat out I end up ordering {val} again, every single time.",
            "We had {val} takeaway again last night, I could survive on it forever.",
            "Found a little {val} place near work and I've been there four times this month.",
        ),
        ("What style of cooking is the user's top pick?", "Which kind of dishes does the user crave most?"),
    ),
    "kind of music": (
        (
            "I had {val} on repeat the whole weekend, can't get enough.",
            "Put some {val} on while I clean and I'm instantly in a good mood.",
            "Went to a {val} gig last night and my ears are still ringing.",
        ),
        ("Which genre does the user listen to most?", "What style of tunes is the user a fan of?"),
    ),
    "sport": (
        (
            "I do {val} three evenings a week, it keeps me sane.",
            "Joined the local {val} club and I'm weirdly competitive about it now.",
            "My knees hurt after {val} training but I'm not quitting.",
        ),
        ("What athletic activity does the user practise?", "Which physical pastime is the user keen on?"),
    ),
    "author": (
        (
            "I've read every single novel {val} ever published, some of them twice.",
            "If you need a recommendation, anything by {val} is a safe bet for me.",
            "Just preordered the next {val} novel, it comes out in the autumn.",
        ),
        ("Which writer does the user admire most?", "Whose books are the user's top choice?"),
    ),
    "board game": (
        (
            "We played {val} until 2am again, I never get tired of it.",
            "Pulled out {val} with friends on Saturday, still my number one.",
            "Friends came over and of course we ended up playing {val} for hours.",
        ),
        ("Which tabletop game does the user like best?", "What board game does the user enjoy most?"),
    ),
    "sister": (
        (
            "{val} and I shared a bedroom until I was twelve, she still steals my clothes.",
            "Mum says {val} was always the responsible daughter, I'm the chaotic one.",
            "{val} borrowed my car again, she's the youngest of us and it shows.",
        ),
        ("Who is the user's sister?", "What is the name of the user's female sibling?"),
    ),
    "brother": (
        (
            "{val} and I used to fight over the console constantly, now he's my favourite person.",
            "My parents' other son, {val}, is visiting next week.",
            "{val} just had a baby with his wife, our mum is over the moon.",
        ),
        ("Who is the user's brother?", "What is the name of the user's male sibling?"),
    ),
    "best friend": (
        (
            "{val} has known me since kindergarten, there's nobody I trust more.",
            "Whenever something goes wrong the first person I text is {val}.",
            "{val} and I have a standing Friday call, twenty years running.",
        ),
        ("Who is the user's closest pal?", "What is the name of the user's best friend?"),
    ),
    "boss": (
        (
            "Had my one-on-one with {val} today, she signed off on my promotion plan.",
            "{val} approved my vacation days without a single question, best manager ever.",
            "{val} wants the quarterly numbers on her desk by Friday.",
        ),
        ("Who is the user's boss?", "Who supervises the user at their job?"),
    ),
    "dentist": (
        (
            "{val} found two cavities at my checkup, my teeth hate me.",
            "Got my fillings done by {val} today, numb mouth all afternoon.",
            "Booked a cleaning with {val} for next month, dreading it.",
        ),
        ("Who is the user's dentist?", "Who takes care of the user's oral health?"),
    ),
    "landlord": (
        (
            "{val} finally fixed the leaking radiator in my flat.",
            "Rent goes straight to {val} on the first of every month.",
            "Texted {val} about the broken boiler, still no answer.",
        ),
        ("Who is the user's landlord?", "Who owns the apartment where the user lives?"),
    ),
    "piano teacher": (
        (
            "{val} says my scales are finally getting smoother.",
            "Lesson with {val} tomorrow and I haven't practised the sonata at all.",
            "{val} gave me a Chopin nocturne to learn, it's beautiful but hard.",
        ),
        ("Who is the user's piano teacher?", "Who instructs the user on the keys?"),
    ),
    "home": (
        (
            "My flat in {val} is tiny but the view over the rooftops is amazing.",
            "Walking along the river here in {val} after work is my favourite ritual.",
            "The tram here in {val} stops right outside my door.",
        ),
        ("Which city is the user's residence?", "Where does the user live?"),
    ),
    "hometown": (
        (
            "When I was a kid in {val} we would sled down the main street every winter.",
            "My parents still have the house in {val} where I was born.",
            "Every summer of my childhood was spent by the lake in {val}.",
        ),
        ("Where did the user grow up?", "What is the user's hometown?"),
    ),
    "employer": (
        (
            "I've been writing backend code at {val} for three years.",
            "Our team at {val} ships a release every second Thursday.",
            "Badge photo day at {val}, I look terrible in mine.",
        ),
        ("Which company does the user work for?", "Who employs the user?"),
    ),
    "conference trip": (
        (
            "Flying out to present our paper at the summit on {val}.",
            "Our talk at the industry summit is on {val}, slides aren't even started.",
            "Booked the hotel for the summit, I fly on {val}.",
        ),
        ("When does the user travel for the conference?", "What day does the user's business travel begin?"),
    ),
    "half marathon": (
        (
            "Race day is {val}, 21 kilometres, I'm terrified.",
            "Signed up for the 21k race, it's on {val}.",
            "Training plan ends on {val}, that's the day of the 21k.",
        ),
        ("When is the user's half marathon?", "On what date is the user's long-distance running event?"),
    ),
    "driving test": (
        (
            "My road exam for the licence is on {val}, wish me luck.",
            "The examiner will ride with me on {val}, parallel parking is my nightmare.",
            "Booked my practical with the examiner for {val}.",
        ),
        ("When is the user's driving test?", "What date does the user try to get a car permit?"),
    ),
    "thesis defense": (
        (
            "I face the examining committee on {val}, four years of research on the line.",
            "The viva is set for {val}, my supervisor says I'm ready.",
            "Printed the final manuscript today, the committee hears me on {val}.",
        ),
        ("When is the user's thesis defense?", "On what date does the user present their doctoral dissertation?"),
    ),
    "housewarming party": (
        (
            "We're having people over on {val} to celebrate the new place.",
            "Invites for the flat-warming went out, it's on {val}.",
            "New flat, new friends: drinks at ours on {val}!",
        ),
        (
            "When is the user's housewarming?",
            "What day will the user host a gathering for the apartment they moved into?",
        ),
    ),
    "cousin's wedding": (
        (
            "My aunt's daughter ties the knot on {val}, I'm doing a reading at the ceremony.",
            "Got the invitation, my aunt's kid gets married on {val}.",
            "Bought a suit for my aunt's daughter's big day on {val}.",
        ),
        ("When is the user's cousin's wedding?", "What date will the user's relative wed?"),
    ),
}
