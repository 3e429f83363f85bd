"""Batch prediction: :func:`predict_many` for op lists and :func:`run_sweep` for op tables."""

from opmodel.batch.engines import EngineChoice
from opmodel.batch.gc_pause import paused_gc
from opmodel.batch.optable import OP_COLUMNS, format_tensors, op_from_row, op_to_row, parse_tensors
from opmodel.batch.predict import RESULT_COLUMNS, SUMMARY_COLUMNS, predict_many
from opmodel.batch.sweep import SweepOptions, SweepSummary, run_sweep

__all__ = [
    "OP_COLUMNS",
    "RESULT_COLUMNS",
    "SUMMARY_COLUMNS",
    "EngineChoice",
    "SweepOptions",
    "SweepSummary",
    "format_tensors",
    "op_from_row",
    "op_to_row",
    "parse_tensors",
    "paused_gc",
    "predict_many",
    "run_sweep",
]
