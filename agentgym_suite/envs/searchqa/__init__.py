"""Multi-hop question answering with a search tool: datasets, retrievers, scoring and the env."""

from agentgym_suite.envs.searchqa.env import SearchQAEnv
from agentgym_suite.envs.searchqa.retrievers import BM25Retriever, HTTPRetriever, Passage, RetrievalError, Retriever
from agentgym_suite.envs.searchqa.search_r1_env import SearchR1Env

__all__ = ["SearchQAEnv", "SearchR1Env", "BM25Retriever", "HTTPRetriever", "Passage", "RetrievalError", "Retriever"]
