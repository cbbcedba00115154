"""Simulated matches: physics, players and the truth that the renderer draws."""
