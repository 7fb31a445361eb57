"""Reports of reproduction runs: markdown, self-contained HTML, JSON summaries, the run index."""

from optzoo.report.render import summary_dict, write_index, write_reports

__all__ = ["summary_dict", "write_index", "write_reports"]
