"""τ²-bench's ``banking_knowledge`` domain: a bank's transactional database, agent and customer tools
(most of them unlocked from a knowledge base of ~700 documents), and the knowledge retrieval."""
