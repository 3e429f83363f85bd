"""Boundary parsing: YAML files to validated objects, every problem reported with its path."""

from opmodel.parsing.op_file import load_op, op_from_mapping
from opmodel.parsing.schema import Check, parse_dataclass
from opmodel.parsing.yamlfile import read_yaml_mapping

__all__ = ["Check", "load_op", "op_from_mapping", "parse_dataclass", "read_yaml_mapping"]
