"""A lookup of a built-in imports only the module that defines it (specs/builtin_homes.py), and
finds what a full load of the built-ins finds; plugins still outrank built-ins."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _child(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=REPO)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_table_says_where_every_built_in_is_registered():
    homes = _child(
        "import importlib, json\n"
        "from evtui.scoring.specs import registry\n"
        "homes = {}\n"
        "for module in registry.builtin_modules():\n"
        "    before = {kind: dict(names) for kind, names in registry._registry.items()}\n"
        "    importlib.import_module(module)\n"
        "    for kind, names in registry._registry.items():\n"
        "        for name, entry in names.items():\n"
        "            if before[kind].get(name) is not entry:\n"
        "                homes.setdefault(kind, {})[name] = module\n"
        "print(json.dumps(homes))"
    )
    from evtui.scoring.specs.builtin_homes import BUILTIN_HOMES

    assert homes == BUILTIN_HOMES


def test_match_alone_loads_neither_ag2_nor_the_grading_code_and_is_the_full_loads_match():
    found = _child(
        "import json, sys\n"
        "from evtui.scoring.specs import registry\n"
        "alone = {kind: registry.lookup(kind, name).factory for kind, name in "
        "(('scorer', 'match'), ('metric', 'accuracy'), ('metric', 'stderr'), ('reducer', 'mean'))}\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(('evtui.scoring.ag2', 'evtui.grading', 'evtui.scoring.inspect.scorers')))\n"
        "registry.load_builtins()\n"
        "same = all(registry.lookup(kind, f.__name__ if kind != 'reducer' else 'mean').factory is f for kind, f in alone.items())\n"
        "print(json.dumps({'loaded': loaded, 'same': same}))"
    )
    assert found["same"]
    assert found["loaded"] == ["evtui.scoring.inspect.scorers", "evtui.scoring.inspect.scorers.match"]


def test_a_plugin_registered_first_still_outranks_a_built_in_looked_up_alone():
    found = _child(
        "import json\n"
        "from evtui.scoring.specs import registry\n"
        "def mine():\n"
        "    return None\n"
        "registry.register('scorer', 'match', mine, origin='plugin mine.py')\n"
        "entry = registry.lookup('scorer', 'match')\n"
        "print(json.dumps({'origin': entry.origin, 'mine': entry.factory is mine}))"
    )
    assert found == {"origin": "plugin mine.py", "mine": True}
