"""Env tests (a package so that they can share helpers such as :mod:`.oracle`)."""
