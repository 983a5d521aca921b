"""Multi-hop question answering with a search tool: datasets, retrievers, scoring and the env."""

from agentgym_suite.envs.searchqa.env import SearchQAEnv
from agentgym_suite.envs.searchqa.retrievers import BM25Retriever, HTTPRetriever, Passage, RetrievalError, Retriever

__all__ = ["SearchQAEnv", "BM25Retriever", "HTTPRetriever", "Passage", "RetrievalError", "Retriever"]
