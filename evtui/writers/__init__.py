"""Files evtui writes for the user, whole or not at all: `svg` (a chart), `inspect_log` (a copy
of an Inspect log with verdicts applied), `stdout` (a command's output to a reader that went
away). Run files themselves are never written."""
