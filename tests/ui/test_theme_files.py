"""Theme files: shipped themes load; broken files are reported by name and skipped."""

from pathlib import Path

import pytest
from textual.color import Color

from evtui.app.themes import (
    ThemeFileError,
    load_theme_file,
    load_themes,
    semantic_defaults,
    theme_search_path,
)

SHIPPED = Path(__file__).resolve().parents[2] / "themes"


def test_shipped_themes_load_with_semantic_colours():
    result = load_themes([SHIPPED])
    assert result.failures == []
    dark, light = result.themes["evtui-dark"], result.themes["evtui-light"]
    assert dark.dark is True and light.dark is False
    for theme in (dark, light):
        assert {"score-pass", "score-fail", "score-partial"} <= set(theme.variables)


def test_checkout_themes_are_on_the_search_path():
    assert SHIPPED in theme_search_path()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('name = "x"\nprimary = "#12345"\n', "primary = '#12345' is not a colour"),
        ('name = "x"\nprimary = "#123456"\nsparkle = "#fff"\n', "unknown keys ['sparkle']"),
        ('name = "x"\nprimary = "#123456"\n[variables]\nscore-pass = "$success"\n', "must be a literal value"),
        ('name = "x"\nprimary = "#123456"\n[variables]\nscore-fail = "reddish"\n', "variables.score-fail"),
        ('name = "x"\nprimary = "#123456"\ndark = "yes"\n', "'dark' must be true or false"),
        ('primary = "#123456"\n', "missing required key 'name'"),
        ('name = "x\n', "not valid TOML"),
    ],
)
def test_broken_theme_file_names_file_and_problem(tmp_path, text, problem):
    path = tmp_path / "broken.toml"
    path.write_text(text)
    with pytest.raises(ThemeFileError) as raised:
        load_theme_file(path)
    assert str(path) in str(raised.value)
    assert problem in str(raised.value)


def test_one_broken_file_does_not_stop_the_others(tmp_path):
    (tmp_path / "good.toml").write_text('name = "good"\nprimary = "#336699"\n')
    (tmp_path / "bad.toml").write_text('name = "bad"\nprimary = "not-a-colour"\n')
    result = load_themes([tmp_path])
    assert list(result.themes) == ["good"]
    assert len(result.failures) == 1 and "bad.toml" in result.failures[0]


def test_later_directory_wins_by_name(tmp_path):
    user_dir = tmp_path / "user"
    user_dir.mkdir()
    (user_dir / "mine.toml").write_text('name = "evtui-dark"\nprimary = "#FF0000"\n')
    result = load_themes([SHIPPED, user_dir])
    assert result.themes["evtui-dark"].primary == "#FF0000"
    assert "evtui-light" in result.themes


def test_semantic_defaults_follow_the_theme_colours():
    theme = load_themes([SHIPPED]).themes["evtui-light"]
    defaults = semantic_defaults(theme)
    for variable, base in (("score-pass", theme.success), ("score-fail", theme.error), ("score-partial", theme.warning)):
        # Textual's colour system round-trips through HSL, so allow one unit per channel.
        got, want = Color.parse(defaults[variable]), Color.parse(base)
        assert max(abs(got.r - want.r), abs(got.g - want.g), abs(got.b - want.b)) <= 1, variable
