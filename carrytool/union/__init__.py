"""Unions: hand-composed commits that provide several overlapping PRs at once.

Owns the folds of `carrytool union compose|continue|abort|status` (`fold`: the scratch tree, its state,
the union commit and the manifest update) and the resolution store that records a maintainer's
conflict resolutions so the next fold reuses them (`resolutions`). May import the review (the drafted
commit message and the evidence), the pipeline (fetching), the manifest, the git layer and errors;
never rendering.
"""
