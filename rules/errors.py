"""Errors that reach the user as one clear line.

Every module raises a subclass of `InputError` for bad input (a malformed log,
a profile that fails validation, a video that cannot be read). The command
line prints the message as a single line and exits non-zero; the message says
what is wrong and what to do about it.
"""


class InputError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""

    exit_code = 2
