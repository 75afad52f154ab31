"""The git layer: the only code that runs git.

Owns how git is run (`env`: scrubbed environment, pinned configuration, version checks), the `Git`
object with its plumbing and long-lived batch processes (`git`), the long-lived chained merge
process (`mergepipe`), the parsers of git's objects and output (`objects`), URLs and their redaction (`urls`) and the repository lock (`repolock`). May import
only `carrytool.errors` and the standard library: everything above it receives a `Git`, never builds
git command lines of its own.
"""
