"""The git layer: the only code that runs git.

Owns how git is run (`env`: scrubbed environment, pinned configuration, version checks), the `Git`
object (`git`: its state and the mixins it is composed of, one module per concern: running git and its
long-lived processes, the scratch directory and close in `processes`; writing objects in `objectwrite`;
moving them from the quarantine into the user's store in `quarantine`; reading objects in `objectread`;
trees in `trees`; history in `history`; content merges in `contentmerge`; tree merges in `treemerge`,
with the merges in processes of their own in `sidemerges`; diffs and patches in `diffs`; refs in `refs`;
answers kept by key in `answers`), the long-lived chained merge process (`mergepipe`), the parsers of
git's objects and output (`objects`), URLs and their redaction (`urls`), the repository lock
(`repolock`), JSON read back from the files and blobs carrytool keeps, with one error for every way a text
is not JSON (`jsonread`: every layer reads them through it, the repository lock too) and a directory moved
from tree to tree with an index of its own (`checkout`: where bisect runs a command). May import only
`carrytool.errors` and the standard library: everything above it receives a `Git`, never builds git command
lines of its own.
"""
