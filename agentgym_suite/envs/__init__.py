"""One module (or small package) per benchmark, plus the synthetic and trial envs (a method's own env,
such as EnvACE's rehearsal env, lives in its method package under ``agentgym_suite/methods/``).

Import nothing heavy here: each env module imports its backend lazily.
"""
