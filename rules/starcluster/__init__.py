"""Star Cluster Ball rules engine (docs/rules.md)."""

from .config import DeadBallRule, OptionalRules, StarClusterConfig
from .engine import StarClusterEngine, StarClusterState

__all__ = ["DeadBallRule", "OptionalRules", "StarClusterConfig", "StarClusterEngine", "StarClusterState"]
