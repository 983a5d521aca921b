"""WebShop on a local engine: catalogue loading, BM25 search, pages, reward and the env."""

from agentgym_suite.envs.webshop.env import WebShopEnv

__all__ = ["WebShopEnv"]
