"""``python -m reliability.train_cli ARGS`` — the ``agentgym`` CLI with the reliability fake envs
registered, so a subprocess can train on ``ReliabilityHang-v0`` (short prompts, fast steps)."""

from __future__ import annotations

import sys

from agentgym_suite.cli import main
from reliability.fakes import register_fakes

if __name__ == "__main__":
    register_fakes()
    sys.exit(main(sys.argv[1:]))
