"""Text and number normalisation shared by the built-in scorers (Inspect 0.3.285 semantics).

`match(numeric=True)` compares numbers at 5 significant digits after dropping currency signs,
thousands separators and markdown emphasis; `f1`/`exact` compare bags of normalised tokens.
The exact rules (and their surprises) are in /work/shared/reference/inspect-semantics.md §2.2, §2.7.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter

from evtui.scoring.inspect.unicode_numbers import parse_unicode_number

__all__ = [
    "PUNCTUATION_AND_SPACE",
    "strip_punctuation",
    "strip_numeric_punctuation",
    "NUMERIC_PUNCTUATION_TRIM",
    "parse_number",
    "is_number",
    "normalize_number",
    "is_finite_number",
    "normalize_token",
    "normalize_text",
    "word_counts",
]

PUNCTUATION_AND_SPACE = _PUNCTUATION_AND_SPACE = string.whitespace + string.punctuation  # what strip_punctuation strips

# "\$" (LaTeX-escaped) and "$" alike go, with "£ € , * _"; a '.' goes unless a digit follows.
_CURRENCY_AND_MARKUP = re.compile(r"\\?[$,£€*_]")
_DOT_NOT_BEFORE_DIGIT = re.compile(r"\.(?!\d)")

# Sentence and bracket punctuation trimmed from a number's ends ("42!", "(42)"). Operators such as
# ~ < > = and % are kept on purpose: "<42" and "60%" are not the number 42 or 60.
NUMERIC_PUNCTUATION_TRIM = "!?:;()[]{}'\"`"

_ASCII_DIGIT = re.compile(r"[0-9]")


def strip_punctuation(text: str) -> str:
    """`text` without leading/trailing whitespace and ASCII punctuation (inner ones kept)."""
    return text.strip(_PUNCTUATION_AND_SPACE)


def strip_numeric_punctuation(text: str) -> str:
    """Drop `$ £ € , * _` (also LaTeX-escaped `\\$`) anywhere, and every '.' not followed by a digit."""
    return _DOT_NOT_BEFORE_DIGIT.sub("", _CURRENCY_AND_MARKUP.sub("", text))


def parse_number(text: str, *, trim_punctuation: bool = True) -> float | None:
    """The finite number `text` spells (plain float syntax or a Unicode form), else None.

    With `trim_punctuation`, sentence/bracket punctuation around the number is ignored.
    """
    if trim_punctuation:
        text = text.strip(NUMERIC_PUNCTUATION_TRIM)
    # Cheap refusal first (float() raising is slow): ASCII without a digit is never a finite
    # number in any of the accepted forms, and that is most words of a completion.
    if text.isascii() and _ASCII_DIGIT.search(text) is None:
        return None
    try:
        value = float(text)
    except ValueError:
        pass
    else:
        if math.isfinite(value):
            return value
    value = parse_unicode_number(text)
    if value is not None and math.isfinite(value):
        return value
    return None


def is_number(text: str) -> bool:
    return parse_number(text) is not None


def normalize_number(text: str, precision: int = 5, *, trim_punctuation: bool = True) -> str:
    """The number in `text` formatted to `precision` significant digits (`"1234.5"`); `text` if none."""
    value = parse_number(text, trim_punctuation=trim_punctuation)
    if value is None:
        return text
    return format(value, f".{precision}g")


def is_finite_number(text: str) -> bool:
    """Does `text` parse with plain `float()` to a finite number?"""
    # Cheap refusal first: float() raising is slow, and ASCII without a digit is never finite.
    if text.isascii() and _ASCII_DIGIT.search(text) is None:
        return False
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


# --- f1 / exact token normalisation -------------------------------------------------------

_ARTICLE = re.compile(r"\b(a|an|the)\b")
_TOKEN_SEPARATOR = re.compile(" |-")  # only space and hyphen split tokens
_DELETE_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_token(token: str) -> str:
    """Casefold, drop punctuation (unless the token is a number), `3` -> `3.0`, drop articles."""
    token = token.casefold()
    if not is_finite_number(token):
        stripped = strip_punctuation(token)
        # Punctuation around a number ("(3.14)", "3.14.") hides it; otherwise drop all of it.
        token = stripped if is_finite_number(stripped) else token.translate(_DELETE_PUNCTUATION)
    if is_finite_number(token):
        token = str(float(token))
    token = _ARTICLE.sub(" ", token)
    return " ".join(token.split())


def normalize_text(text: str, stop_words: list[str] | None = None) -> str:
    """`text` as space-joined normalised tokens, without stop words and empty tokens."""
    stop = {normalize_token(word) for word in stop_words} if stop_words else ()
    kept = []
    for token in _TOKEN_SEPARATOR.split(text):
        token = normalize_token(token)
        if token not in stop and token.strip():
            kept.append(token)
    return " ".join(kept).strip()


def word_counts(text: str, stop_words: list[str] | None = None) -> Counter[str]:
    """The bag of normalised words in `text` (multiplicity matters for f1)."""
    return Counter(normalize_text(text, stop_words).split())
