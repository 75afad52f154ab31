"""Rendering: reports and explanations as text (rich on a terminal, plain in pipes), Markdown, GitHub
annotations and union outcomes. The only place besides cli.py that imports rich; it may import every
package below it but never computes a result of its own.
"""
