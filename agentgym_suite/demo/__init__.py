"""The main job end to end: evaluate a model, train it with GRPO and a credit plug-in,
evaluate it again on held-out tasks, and write a report (``agentgym demo``)."""

from agentgym_suite.demo.pipeline import DemoSettings, run_demo

__all__ = ["DemoSettings", "run_demo"]
