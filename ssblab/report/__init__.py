"""The main job's HTML report: analyses of a dataset as sections of facts, tables and figures (`render`)."""

from ssblab.report.html import Report, Section, Table, render

__all__ = ["Report", "Section", "Table", "render"]
