"""Unions: hand-composed commits that provide several overlapping PRs at once.

Owns the folds of `carrytool union new|compose|continue|abort|status`: `fold` (the fold's state machine
and entry points: compose, continue, abort), `outcome` (what a fold folds and what it did), `stop` (a
stop: the conflicts named, the scratch written), `record` (recording what the user left in the scratch
tree), `taken` (what continue takes beyond the conflicted files, and the editor leftovers it refuses), `checks` (what a finished fold checks and says: left-out hunks, unbound names), `syntax` (its
Python files that no longer parse), `requires_python` (the Python upstream declares), `rewritten` (the PRs' lines it re-expresses outside the conflicts),
`publish` (the union message, the patch file, the manifest update), `scratch` (the scratch tree: exact checkout, lstat
reads, file-by-file cleanup), `state` (the fold's crash-safe state), `status`, `new` (adding the carry entry) and
`resolutions` (the hunk resolutions and fixups a maintainer recorded, reused by the next fold: cut from
a conflicted file and put back), `store` (their store, next to the manifest), `reuse` (replaying them on one merge), `upstream_edit` (which of upstream's lines a recorded
edit removes: a refold that finds it removing new ones asks), `upstream_hunks` (the same of a hunk's
resolution) and `recorded_upstream` (what a hunk's record says of upstream's lines, at each place of its
key). May import the review (the drafted commit message and the evidence), the pipeline (fetching), the
manifest, the git layer and errors; never rendering.
"""
