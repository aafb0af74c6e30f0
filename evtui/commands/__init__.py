"""One module per `evtui` subcommand."""
