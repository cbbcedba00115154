"""Vision pipeline: frames in, observations out. Vision never decides a score."""
