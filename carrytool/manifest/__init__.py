"""The manifest: what the fork carries, as the user declared it.

Owns the v1 model (`model`: frozen dataclasses and the one key table `SCHEMA`), its validation naming
key path and line (`build`, its mixins `build_keys`, `build_entries`, `build_asserts`), the safe YAML
reader (`yamlload`), finding and loading a manifest (`load`), the JSON Schema generated from the key
table (`schema`), in-place edits that keep comments (`edit`) and path patterns (`paths`). May import
`carrytool.gitlayer` (URL and ref-name checks), `carrytool.asserts` (the spec types) and
`carrytool.errors`; never the pipeline, the review, the union or rendering.
"""
