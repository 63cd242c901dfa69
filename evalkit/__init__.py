"""evalkit: a teaching and experiment kit for evaluating LLM dialogue."""
__version__ = "0.1.0"
