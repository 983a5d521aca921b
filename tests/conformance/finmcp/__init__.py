"""FinMCP conformance inputs and DianJin-TIR's metrics on them."""
