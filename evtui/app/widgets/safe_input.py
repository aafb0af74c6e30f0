"""An Input that draws its value through the one sanitiser (evtui/safe_text.py).

Textual's Input draws its value as it is: a value pre-filled from a run (a filter selecting a
group, a queue named after a scorer, an export path named after a run file) or pasted by the user
would send an ESC to the terminal. SafeInput keeps the value exact (what the user submits is what
was there) and draws each control, bidi or invisible character as one visible character
(safe_chars), so the cursor's place in the value is its place on screen.

A placeholder may come in shorter forms (`placeholders`, longest first): the input shows the
longest that fits its width, so at 80 columns a hint reads `filter, e.g. match == "I"` rather
than being cut inside its example.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.cells import cell_len, get_character_cell_size
from rich.text import Text
from textual.expand_tabs import expand_tabs_inline
from textual.geometry import clamp
from textual.widgets import Input

from evtui.safe_text import safe_chars


class SafeInput(Input):
    """Input whose drawn text never holds a raw control or bidi character."""

    def __init__(self, value: str | None = None, placeholder: str = "", *args: Any,
                 placeholders: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(value, placeholder or (placeholders[0] if placeholders else ""), *args, **kwargs)
        self.placeholder_forms = tuple(placeholders)

    def on_resize(self) -> None:
        if self.placeholder_forms:
            room = self.content_region.width
            forms = self.placeholder_forms
            self.placeholder = next((form for form in forms if cell_len(form) <= room), forms[-1])

    @property
    def _value(self) -> Text:
        if self.password:
            return super()._value
        text = Text(safe_chars(self.value), no_wrap=True, overflow="ignore", end="")
        return self.highlighter(text) if self.highlighter is not None else text

    # Cursor and mouse positions as the value is drawn (Input measures the raw value, in which an
    # ESC is zero cells wide).
    def _position_to_cell(self, position: int) -> int:
        return cell_len(expand_tabs_inline(safe_chars(self.value[:position]), 4))

    def _cell_offset_to_index(self, offset: int) -> int:
        cell_offset = 0
        scroll_x, _ = self.scroll_offset
        offset += scroll_x
        shown = safe_chars(self.value)
        for index, char in enumerate(shown):
            width = get_character_cell_size(char)
            if cell_offset <= offset < cell_offset + width:
                return index
            cell_offset += width
        return clamp(offset, 0, len(shown))
