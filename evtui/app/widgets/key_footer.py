"""The footer of key bindings, rebuilt only when the keys it shows change.

Textual's Footer rebuilds all its keys (and restyles each) every time the screen's bindings
change, and opening a screen changes them several times in a row (widgets mount, focus moves,
dynamic bindings refresh) while the keys shown mostly stay the same: six rebuilds when the
samples table opens, which kept the main thread busy for ~0.3 s while the table's first rows
waited in the message queue. Here changes that arrive before the next refresh share one look,
and the footer is rebuilt only if the keys, labels or enabled states differ from what it shows.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


# Below this width the keys are packed (compact) and the `^p palette` key is left out (ctrl+p
# still opens it): at 80 columns the compare screen's eight keys were cut after `t`.
NARROW_WIDTH = 100


class KeyFooter(Footer):
    """Footer keys; `? Help` first, so a narrow terminal that cuts the row still shows it."""

    _rebuild_pending = False
    _shown: Any = None  # what the last compose showed

    def _showing(self) -> Any:
        keys = tuple(
            (binding.key, binding.key_display, binding.description, binding.show, enabled, tooltip)
            for (_, binding, enabled, tooltip) in self.screen.active_bindings.values()
        )
        return keys, self.compact

    def on_resize(self, event: events.Resize) -> None:
        narrow = event.size.width < NARROW_WIDTH
        if narrow != self.compact:
            self.compact = narrow
            self.show_command_palette = not narrow
            if self._bindings_ready and not self._rebuild_pending:
                self._rebuild_pending = True
                self.call_after_refresh(self._rebuild)

    def compose(self) -> ComposeResult:
        if self._bindings_ready:
            self._shown = self._showing()
        widgets = list(super().compose())
        first = [w for w in widgets if isinstance(w, FooterKey) and w.action in ("help", "app.help")]
        yield from first + [w for w in widgets if w not in first]

    def bindings_changed(self, screen: Screen) -> None:
        # As Textual's Footer.bindings_changed (textual 8.2.8), with the rebuild coalesced.
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._rebuild_pending:
            self._rebuild_pending = True
            self.call_after_refresh(self._rebuild)

    async def _rebuild(self) -> None:
        self._rebuild_pending = False
        if self.is_attached and self._showing() != self._shown:
            await self.recompose()
