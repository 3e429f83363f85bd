"""A readable account of one prediction: achieved rates against the device's peaks, the limit
the model names, the kernel, the average power (:func:`summarize`, :func:`format_summary`)."""

from opmodel.report.hardware_table import format_hardware_table
from opmodel.report.summary import OpSummary, summarize
from opmodel.report.text import format_summary, si

__all__ = ["OpSummary", "format_hardware_table", "format_summary", "si", "summarize"]
