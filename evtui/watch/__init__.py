"""Live runs: notice new, changed and removed run files and Inspect's in-flight samples.

`poller.RunDirWatcher` feeds changed files through readers → store incrementally;
`sample_buffer` reads a running Inspect eval's sample buffer (read-only). No Textual here.
"""

from evtui.watch.poller import LiveUpdate, RunDirWatcher, WatchChange
from evtui.watch.sample_buffer import LiveBuffer, LiveSample, read_buffer

__all__ = ["RunDirWatcher", "WatchChange", "LiveUpdate", "LiveBuffer", "LiveSample", "read_buffer"]
