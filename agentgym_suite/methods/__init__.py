"""The method floor: each subpackage is one method whole (its credit plug-in, its envs, agents,
evaluation extensions, commands and record upgrades), above the trainer and evaluation floors.

No generic module imports a method package. Each declares what it plugs in as entry points
(``ENTRY_POINTS`` in its ``__init__``, the groups of :mod:`agentgym_suite.core.plugins`), found by
:func:`agentgym_suite.core.plugins.suite_methods` the way an installed distribution's are; its
envs are string entry points of the registration table, as every env of the suite is.
"""
