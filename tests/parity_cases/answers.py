"""LLM-style "ANSWER:" completions: the letter/word/line gotchas and multiple-choice replies."""

from __future__ import annotations

import random

ANSWER_COMPLETIONS = [
    "ANSWER: B",
    "ANSWER: b",
    "ANSWER:B",
    "ANSWER : B",
    "Answer: B",
    "answer: b.",
    "**ANSWER: B**",
    "ANSWER: **B**",
    "ANSWER: (C)",
    "ANSWER: $B$",
    "ANSWER: Bee",
    "ANSWER: B, C",
    "ANSWER: A,C",
    "ANSWER: AC",
    "ANSWER: A and C",
    "ANSWER: A, B, and D",
    "ANSWER: A,",
    "ANSWER: A.",
    "ANSWER: a, c",
    "ANSWER: 1",
    "ANSWER: 27",
    "ANSWER: E",
    "ANSWER: Z",
    "ANSWER:\nB",
    "ANSWER: \n\nC",
    "Let me think.\nThe capital is Paris.\nANSWER: A",
    "ANSWER: A\n\nWait, actually ANSWER: C",
    "First ANSWER: A then\nANSWER: D\n",
    "ANSWER: A\nANSWER: B\nThat is my final answer.",
    "My final ANSWER: A because Paris",
    "Final answer is B",
    "The answer is (B).",
    "B",
    "",
    "  \n ",
    "ANSWER: yes",
    "ANSWER: Yes.",
    "ANSWER: yes?!",
    "ANSWER: **yes**",
    "ANSWER: no, because it rains",
    "ANSWER: no",
    "ANSWER:   no   ",
    "ANSWER: Paris",
    "ANSWER: Paris   ",
    "ANSWER: Paris.",
    "ANSWER: New York City",
    "I think so.\nANSWER: New York City\n",
    "ANSWER: Paris\nsome trailing text",
    "ANSWER: 42",
    "ANSWER: -3.5",
    "ANSWER: A) Paris",
    "answer:\tc",
    "ANSWER: ß",
    "ANSWER: İ",
    "The ANSWER: D is my choice",
    "\\boxed{12}",
    "Result = 12; result = 15",
    "x: 3, y: 4",
    "name: Alice age: 30",
    "grade: C\ngrade: I",
]

ANSWER_TARGETS = [
    ["B"], ["b"], ["C"], ["A"], ["A", "C"], ["D"], ["yes"], ["Yes"], ["no"], ["Paris"],
    ["paris"], ["New York City"], ["42"], ["12"], ["15"], ["3"], ["4"], ["ss"], ["i"], [""],
    ["yes?"], ["**yes**"], ["Alice"], ["30"], ["Alice", "30"],
]

PATTERNS = [
    r"ANSWER\s*:\s*([A-D])",  # one group
    r"ANSWER\s*:\s*(\w+)",
    r"\\boxed\{(\d+)\}",
    r"result = (\d+)",
    r"[Rr]esult = \d+",  # no group: the whole match
    r"ANSWER:",  # no group
    r"x: (\d+), y: (\d+)",  # two groups
    r"name: (\w+) age: (\d+)",
    r"(yes)|(no)",  # two groups, one always None
    r"ANSWER: (A)?(B)?",  # optional groups, both may be None
    r"(.*)",  # nullable: matches empty output
    r"(\d*)",
    r"grade: ([CPI])",
    r"(?:ANSWER: )(\w)(\w)?",
]


def random_multiple_choice_replies(count: int, seed: int) -> list[str]:
    """Replies in the many shapes models give for "ANSWER: $LETTERS"."""
    rng = random.Random(seed)
    prefixes = ["", "Let me think step by step.\n", "The answer should be clear.\n\n", "I think ", "My final "]
    keywords = ["ANSWER", "Answer", "answer", "ANSWER ", "**ANSWER", "Final answer"]
    wrappers = ["{}", "({})", "**{}**", "${}$", "{}.", "{},", " {} ", "{}**"]
    separators = [", ", ",", " ", "", " and ", " AND ", ", and "]
    suffixes = ["", ".", "\n", "\nThat is all.", " because it is", "**", "\n\nANSWER: A"]
    replies = []
    for _ in range(count):
        labels = rng.sample("ABCDEFabcde12", rng.randint(1, 3))
        body = rng.choice(separators).join(rng.choice(wrappers).format(label) for label in labels)
        reply = f"{rng.choice(prefixes)}{rng.choice(keywords)}:{rng.choice(['', ' ', '  ', chr(10)])}{body}{rng.choice(suffixes)}"
        replies.append(reply)
    return replies
