"""Pure rules engines and the event model they consume.

Nothing in this package imports OpenCV or numpy: a score is decided here from
events alone, so it can be replayed and audited without any vision code.
"""
