"""Dockable panels beside the canvas: inspector, palette, chain rule, Jacobian, summary.

Each panel is its own module and imported by name (``from gui.panels.chain_rule
import ChainRulePanel``), so opening the inspector never loads pyqtgraph.
"""
