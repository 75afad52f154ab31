"""Maintenance scripts of this repository (not shipped): `python -m tools.gendocs` is `make docs`."""
