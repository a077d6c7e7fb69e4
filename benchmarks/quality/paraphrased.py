"""Interim paraphrase check: the generated questions rewritten to share no content word with their
evidence (``python -m benchmarks.quality.paraphrased IN.json OUT.json``).

The generator's own questions reuse the evidence's words ("Who is the user's landlord?" for "my
landlord's name is …"), so full text finds them and an embedder's quality stays invisible. This
rewrites each question by its fact slot ("Who owns the apartment the user lives in?"); the
evidence, answers and stale values are unchanged. Used to choose the embedder and the relevance
fusion (``benchmarks/RESULTS.md``) until the generator gains paraphrased questions of its own.

    python -m benchmarks.quality --export /tmp/full.json --size full
    python -m benchmarks.quality.paraphrased /tmp/full.json /tmp/para.json
    python -m benchmarks.quality --dataset /tmp/para.json --name paraphrased
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

# Slot subject (as the generated questions name it) → a question with none of the evidence's words.
PARAPHRASES = {
    "drink": "What beverage does the user enjoy sipping{now}?",
    "cuisine": "Which food tradition does the user love eating{now}?",
    "music": "Which genre does the user listen to{now}?",
    "sport": "Which physical activity does the user enjoy playing{now}?",
    "author": "Which writer does the user admire{now}?",
    "board game": "Which tabletop title does the user enjoy playing{now}?",
    "sister": "Who is the user's female sibling?",
    "brother": "Who is the user's male sibling?",
    "best friend": "Who is the user's closest pal?",
    "boss": "Who does the user report to at the office{now}?",
    "dentist": "Who looks after the user's teeth{now}?",
    "landlord": "Who owns the apartment the user lives in{now}?",
    "piano teacher": "Who gives the user keyboard lessons{now}?",
    "grow up": "In which town did the user spend their childhood?",
    "hometown": "In which town did the user spend their childhood?",
    "city": "In which town does the user reside{now}?",
    "based": "In which town does the user reside{now}?",
    "company": "Which firm pays the user's salary{now}?",
    "employer": "Which firm pays the user's salary{now}?",
    "conference trip": "On which day does the user travel to the professional event{now}?",
    "half marathon": "On which day is the user's 21-kilometre race{now}?",
    "driving test": "On which day is the user's road exam for a licence{now}?",
    "thesis defense": "On which day does the user present their doctoral research{now}?",
    "housewarming party": "On which day is the user's new-home celebration{now}?",
    "cousin's wedding": "On which day does the user's relative get married{now}?",
}


def paraphrase(question: str, kind: str) -> str:
    """The rewritten question (the longest subject named in ``question`` decides)."""
    for subject in sorted(PARAPHRASES, key=len, reverse=True):
        if subject in question:
            return PARAPHRASES[subject].format(now=" now" if kind == "updated" else "")
    raise ValueError(f"no paraphrase for question {question!r}")


def main(argv: list[str]) -> int:
    """Rewrite the questions of dataset ``argv[0]`` into ``argv[1]``."""
    data = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    for q in data["questions"]:
        q["question"] = paraphrase(q["question"], q.get("kind", "all"))
    Path(argv[1]).write_text(json.dumps(data), encoding="utf-8")
    print(f"wrote {len(data['questions'])} paraphrased questions to {argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
