"""Hand-written LLM-style completions and targets, and a seeded generator of number spellings."""

from __future__ import annotations

import random

NUMERIC_COMPLETIONS = [
    "42",
    "The answer is 42.",
    "The answer is **42**.",
    "ANSWER: 42",
    "**ANSWER: 42**",
    "Answer: 42\n\n**Explanation:** we add 40 and 2.",
    "Step 1: add 40 and 2.\nStep 2: the total is 42",
    "It costs $5.",
    "It costs \\$5.00",
    "The total is 1,234.50",
    "The total is 1,234.5 dollars",
    "€1.234,56",
    "3,5",
    "-3.0",
    "The result is -3",
    "-0",
    "0",
    "About 60%",
    "60 %",
    "½",
    "2½ cups",
    "-½",
    "２０",
    "二十",
    "十二点五",
    "一亿五千万",
    "1 000 000",
    "one million: 1 000 000",
    "\\boxed{12}",
    "The final answer is $\\boxed{12}$.",
    "1e3",
    "1.5E-3",
    "6.02e23 molecules",
    "123456",
    "123457",
    "42.0000001",
    "3.14159",
    "3.14",
    "(42)",
    "[42]",
    "42!",
    "~42",
    "<42",
    ">=42",
    "42nd",
    "3/4",
    "inf",
    "nan",
    "",
    "   ",
    "\n",
    "I don't know.",
    "Ⅻ",
    "3²",
    "-2²",
    "−5",
    "١٢٣",
    "1'000",
    "__42__",
    "*42*",
    "The answer is 25",
    "5",
    "The numbers are 7, 12 and 42.",
    "x = 7\ny = 42\n",
    "Final: 0.5",
    ".5",
    "5.",
    "42.",
    "1,000 apples",
    "1000 apples",
    "4 2",
    "approximately 3.0e+2",
    "300",
    "+7",
    "ANSWER: $1,000",
    "I think it's 17... no wait, 19.",
]

NUMERIC_TARGETS = [
    ["42"], ["42.0"], ["-3"], ["0"], ["-0"], ["60"], ["60", "60%"], ["0.5"], ["20"], ["12.5"],
    ["1000000"], ["1,000,000"], ["12"], ["1000"], ["0.0015"], ["6.02e23"], ["123456"], ["3.14"],
    ["5"], ["$5"], ["1234.5"], ["1.23456"], ["35"], ["2.5"], ["-0.5"], ["144"], ["9"], ["4"],
    ["-5"], ["123"], ["19"], ["7"], ["inf"], ["nan"], ["1,000 apples"], ["300"], ["25", "42"],
    ["150000000"], ["42 "], [" 42"], ["forty-two"], [""], ["."], ["0.75"], ["3/4"],
]

TEXT_COMPLETIONS = [
    "Paris",
    "The capital of France is Paris.",
    "paris",
    "PARIS!",
    "Answer: Paris",
    "**Paris**",
    "Paris is the capital.",
    "I believe it's Paris, France.",
    "¿Paris?",
    "Straße",
    "STRASSE",
    "İstanbul",
    "istanbul",
    "ﬁle",
    "file",
    "",
    " ",
    "yes",
    "Yes.",
    "No, because it is not.",
    "The answer is (B)",
    "B",
    "b)",
    "café",
    "cafe",
    "New York City",
    "new-york",
    "a dog",
    "≈ 5",
    "Hello\tworld",
]

TEXT_TARGETS = [
    ["Paris"], ["paris"], ["France"], ["Paris, France"], ["strasse"], ["Straße"], ["istanbul"],
    ["file"], [""], ["."], ["yes"], ["no"], ["B"], ["(B)"], ["cafe"], ["café"], ["New York"],
    ["york city"], ["dog"], ["5"], ["world"], ["London", "Paris"], ["Berlin", "Rome"],
]


def random_number_spellings(count: int, seed: int) -> list[str]:
    """Numbers written the ways models write them (signs, grouping, scripts, fractions, noise)."""
    rng = random.Random(seed)
    digits_by_script = ["0123456789", "０１２３４５６７８９", "٠١٢٣٤٥٦٧٨٩", "०१२३४५६७८९"]
    pieces = [
        "-", "+", "−", "－", "负", "正", ".", ",", " ", "\u00a0", "'", "’", "e", "E", "e-", "½", "¼",
        "⅓", "²", "³", "⁻", "十", "百", "千", "万", "亿", "点", "零", "一", "二", "五", "九", "兩",
        "廿", "Ⅻ", "①", "٫", "．", "$", "%", "(", ")", "!", "x", "_", "*", "、", "〇", "e+",
    ]
    spellings = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 6)):
            roll = rng.random()
            if roll < 0.55:
                script = rng.choice(digits_by_script) if rng.random() < 0.2 else "0123456789"
                parts.append("".join(rng.choice(script) for _ in range(rng.randint(1, 4))))
            else:
                parts.append(rng.choice(pieces))
        spellings.append("".join(parts))
    return spellings
