"""The ``humeval`` command line: one module per command, each a thin adapter over the API."""
