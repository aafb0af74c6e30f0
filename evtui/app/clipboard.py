"""The one way evtui writes the terminal's clipboard (OSC 52, Textual's `copy_to_clipboard`).

Off unless the user allows it with EVTUI_CLIPBOARD=osc52: what is copied is run text (a sample
may be megabytes of it) and a terminal that honours OSC 52 writes the system clipboard with no
prompt. Copied text goes through the one sanitiser first (safe_block, no line limit): C0/C1
controls other than newline and tab, bidi overrides and hidden characters become visible
placeholders, so pasting it into a terminal runs no escape sequence.
"""

from __future__ import annotations

import os

from textual.dom import DOMNode

from evtui.safe_text import safe_block, safe_line

CLIPBOARD_ENV = "EVTUI_CLIPBOARD"
ALLOWED = "osc52"
OFF_MESSAGE = f"Copying is off: set {CLIPBOARD_ENV}={ALLOWED} to let evtui write the terminal's clipboard (OSC 52)."


def clipboard_allowed() -> bool:
    return os.environ.get(CLIPBOARD_ENV, "").strip().lower() == ALLOWED


def copy_text(node: DOMNode, text: str, what: str) -> bool:
    """Copy `text` (run text allowed: it is made safe here) and say so, naming `what` was copied;
    when copying is off or there is nothing to copy, say that instead. True when copied."""
    if not clipboard_allowed():
        node.notify(OFF_MESSAGE, title="Clipboard", severity="warning", markup=False)
        return False
    if not text:
        node.notify(f"Nothing to copy: {safe_line(what, 80)} is empty", title="Clipboard", markup=False)
        return False
    safe = safe_block(text, None)
    node.app.copy_to_clipboard(safe)  # EvtuiApp's gate passes it on (safe_block of safe text is the same text)
    node.notify(f"Copied {safe_line(what, 300)}", title="Clipboard", markup=False)
    return True
