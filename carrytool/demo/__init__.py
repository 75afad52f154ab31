"""The embedded demo scenario: a pared-down vLLM wake path with its PRs and union, built as real git
repositories, and `carrytool demo`, which runs the naive loop beside sync, verify and explain on it.
May import every package below the CLI.
"""
