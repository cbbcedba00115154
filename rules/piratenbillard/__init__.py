"""Piratenbillard: the 96-space board game of capturing and securing balls."""

from .config import PiratenbillardConfig
from .engine import Lift, PiratenbillardEngine, PiratenbillardState

__all__ = ["Lift", "PiratenbillardConfig", "PiratenbillardEngine", "PiratenbillardState"]
