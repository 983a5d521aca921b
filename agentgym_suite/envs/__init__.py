"""One module (or small package) per benchmark, plus the synthetic and rehearsal envs.

Import nothing heavy here: each env module imports its backend lazily.
"""
