"""The nightly pipeline: from a manifest to a composed, checked fork branch.

In order: `resolve` (fetch into refs/carrytool/..., pin every input) -> `facts` (merge bases, diffs) ->
`plan` (pure: what applies and why not) -> `compose` (in memory, one commit per entry; its merges onto
upstream, chained merges and conflicts in `compose_upstream`, `compose_chain`, `compose_conflicts`; `blame` says
who a conflict is with; `structured` and `structured_tree` resolve Python adjacency conflicts when the
manifest opts in) -> `hunks`, `landing` and `scopes` (every hunk landed, dropped or clobbered; `spancache`
keeps scopes by blob)
-> `lock` and `report` -> `sync` (the whole job, moving the branch only when every check holds; its options
and plan in `sync_records`, its warnings in `sync_warnings`, replaced commits in `sync_replaced`, the push
and the lock's rename in `sync_publish`) and
`verify` (the asserts on any tree). May import `carrytool.manifest`, `carrytool.gitlayer`,
`carrytool.asserts` and `carrytool.errors`; never the review, the union or rendering, and it never prints.
"""
