"""Adapters that plug suite envs into other tools (``trl``: TRL's ``environment_factory``)."""
