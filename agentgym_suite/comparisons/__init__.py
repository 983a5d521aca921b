"""``agentgym compare``: credit plug-ins trained head to head from the same weights on the same
seeded tasks with the same budget, evaluated on the same held-out tasks, in one report."""
