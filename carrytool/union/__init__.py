"""Unions: hand-composed commits that provide several overlapping PRs at once.

Owns the folds of `carrytool union new|compose|continue|abort|status`: `fold` (the fold, the union
commit, the manifest update), `scratch` (the scratch tree: exact checkout, lstat reads, file-by-file
cleanup), `state` (the fold's crash-safe state), `status`, `new` (adding the carry entry) and
`resolutions` (the store of hunk resolutions and fixups a maintainer recorded, reused by the next
fold), `reuse` (replaying them on one merge) and `upstream_edit` (which of upstream's lines a recorded
edit removes: a refold that finds it removing new ones asks). May import the review (the drafted commit message and the evidence), the pipeline (fetching),
the manifest, the git layer and errors; never rendering.
"""
