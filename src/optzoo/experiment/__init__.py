"""The reproduction engine: contract types, runner, result store, backends, statistics."""

from optzoo.experiment.core import (
    PRESET_NAMES,
    Claim,
    Figure,
    Preset,
    Reproduction,
    Result,
    Summary,
    Table,
    Trial,
)
from optzoo.experiment.stats import aggregate, fmt_ci, group, mean_ci
from optzoo.experiment.verdicts import Verdict

__all__ = [
    "PRESET_NAMES", "Claim", "Figure", "Preset", "Reproduction", "Result", "Summary", "Table",
    "Trial", "Verdict", "aggregate", "fmt_ci", "group", "mean_ci",
]
