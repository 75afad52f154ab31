"""The reviewer's and the maintainer's view: `carrytool explain`, `diff` and `status`.

Owns the facts gathered per entry (`evidence`), the overlap map between entries (`overlap`; its pair
merges: `overlap_pairs`, their decisions kept on disk: `paircache`), what a union covers of the PRs it
supersedes (`coverage`), what upstream already has of an entry that conflicts with it (`upstream_has`;
kept on disk: `hascache`), suggestions (`suggest`: unions to create, stale folds, drift), one entry's story (`story`), the result as one value (`explanation`) and the command
itself (`explain`); and the morning commands: `carrytool bisect`, the search over the composed chain
(`bisect`) and the probes that judge a tree (`probe`: asserts in process, `--run CMD` in a temporary
tree, the verdict cache); `diff` (two nights, from their locks); `status` (what the forge did with the
carried PRs, through `forge`, the one HTTP client, standard library only; `status_local`: of a local-path
upstream, told from this repository). May import the pipeline
(explain plans exactly as sync does), the manifest, the git layer, the asserts and errors; never the
union or rendering.
"""
