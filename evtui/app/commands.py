"""Command palette entries for evtui (Textual's own palette already offers theme switching)."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider


class EvtuiCommands(Provider):
    """App-wide evtui commands: themes by name, failed files, help."""

    def _commands(self) -> list[tuple[str, str, object]]:
        app = self.app
        commands: list[tuple[str, str, object]] = [
            ("Failed files", "List the run files that could not be indexed", app.action_show_failures),
            ("Help: keys", "Show the keys of the current screen", app.action_help),
            ("Scoring jobs", "Running, queued and finished scoring jobs; cancel or resume", app.action_show_jobs),
            ("Theme: toggle dark/light", "Switch between evtui-dark and evtui-light", app.action_toggle_dark_light),
        ]
        for name in sorted(app.available_themes):
            commands.append((f"Theme: {name}", f"Switch to the {name} theme", partial(setattr, app, "theme", name)))
        return commands

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands()[:3]:
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)
