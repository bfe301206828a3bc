"""Seeing what happens: ``draw_graph`` (the autograd graph of a result) and ``summary`` (a model's layers,
output shapes and parameter counts). ``graphviz`` is needed by ``draw_graph`` only, and imported when it is called."""
from ._graph import draw_graph
from ._summary import ModelStatistics, summary

__all__ = ["draw_graph", "summary", "ModelStatistics"]
