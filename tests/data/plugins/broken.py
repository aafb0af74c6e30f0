"""A plugin with a bug on line 5."""
from evtui.scoring import scorer  # noqa: F401 - a plugin imports the decorators

VALUE = 1
RESULT = VALUE / 0
