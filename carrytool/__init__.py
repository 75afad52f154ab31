"""carrytool: keep a fork building on top of upstream, carrying PRs and fork fixes deterministically."""

__version__ = "0.1.0"
