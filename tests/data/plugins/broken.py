"""A plugin with a bug on line 5."""
from evtui.scoring import scorer

VALUE = 1
RESULT = VALUE / 0
