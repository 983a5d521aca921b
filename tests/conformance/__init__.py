"""Conformance suites: fixed inputs replayed through our envs against outputs of the official code.

Each benchmark keeps its own folder here: the expected outputs produced by running the upstream
harness (with the upstream commit they came from), the script that regenerates them, and a test
that replays the same inputs through the suite and demands equality.
"""
