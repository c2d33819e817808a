"""The Qt-free view model: what the canvas, panels and exporters show, as plain data.

Everything that turns (graph, results, trace, position) into what is shown lives
here: the timeline and its frames, node box content, edge label text, the
chain-rule and end-to-end write-ups, status text. Nothing in this package imports
Qt (an import-linter contract in pyproject.toml enforces it), so exporters and
tests call the same functions headless and widgets only draw what they return.
"""
