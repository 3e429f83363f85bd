"""A readable account of one prediction: achieved rates against the device's peaks, the limit
the model names, the kernel, the average power (:func:`summarize`, :func:`format_summary`)."""

from opmodel.report.summary import OpSummary, summarize
from opmodel.report.text import format_summary, si

__all__ = ["OpSummary", "format_summary", "si", "summarize"]
