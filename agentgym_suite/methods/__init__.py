"""The method floor: each subpackage is one method whole (its credit plug-in, its envs, agents,
evaluation extensions, commands and record upgrades), above the trainer and evaluation floors.

No generic module imports a method package. Each declares what it plugs in as entry points
(``ENTRY_POINTS`` in its ``__init__``, the groups of :mod:`agentgym_suite.core.plugins`), found by
:func:`agentgym_suite.core.plugins.suite_methods` and read with an installed distribution's
(:func:`agentgym_suite.core.plugins.declared`): its envs (group ``agentgym_suite.envs``, an
``EnvEntry``), credit plug-in, eval extension and record upgrades.
"""
