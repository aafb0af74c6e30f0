"""Allow `python -m evtui`."""

from evtui.cli import main

raise SystemExit(main())
