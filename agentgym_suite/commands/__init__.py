"""Subcommands of the ``agentgym`` command line, one module each."""
