"""Taking a run folder for one referee process: a new run, a resumed one, or a fresh start beside the old.

A run folder is a match record, so it is never written over: a folder that already holds a run is
refused, continued (`--resume`), or moved aside whole (`--fresh`, to `DIR.replaced-<UTC time>`) before
a new run starts in its place. The writer's lock (`record.run_folder.RunLock`) is taken before the
folder is looked at, so two processes never both decide the folder is theirs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from record.run_folder import INPUTS_DIR, LOCK_FILE, RunFolderError, RunLock

STARTS = ("new", "resume", "fresh")  # RunSpec.start: how a run treats an --out folder that holds a run


@dataclass
class Claim:
    """The folder is this process's: its lock, and where an old run was moved to (`--fresh`)."""

    folder: Path
    lock: RunLock
    moved_aside: Path | None = None

    def release(self) -> None:
        self.lock.release()


def claim_folder(folder: Path, start: str, what: str) -> Claim:
    """Lock `folder` for a run started as `start` (STARTS); RunFolderError says why it cannot be had."""
    if folder.exists() and not folder.is_dir():
        raise RunFolderError(f"--out {folder} is a file, not a folder; give a folder for the run's files")
    if start == "resume":
        if not folder.is_dir():
            raise RunFolderError(f"--out {folder} does not exist, so there is no run to resume; drop --resume to "
                                 "start a new run there")
        return Claim(folder, RunLock(folder).acquire(what))
    moved = None
    if start == "fresh" and folder.is_dir() and recorded_files(folder):
        old = RunLock(folder).acquire(f"moving {folder} aside")  # refused while a run is writing it
        try:
            moved = _aside(folder)
            os.rename(folder, moved)
        except OSError as error:
            raise RunFolderError(f"cannot move {folder} aside ({error.strerror or error}); move it yourself, "
                                 "or use another --out folder") from None
        finally:
            old.release()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise RunFolderError(f"cannot create the run folder {folder} ({error.strerror or error}); pick a writable "
                             "--out folder") from None
    lock = RunLock(folder).acquire(what)
    found = recorded_files(folder)
    if found:
        lock.release()
        names = ", ".join(sorted(found)[:4]) + (", ..." if len(found) > 4 else "")
        raise RunFolderError(f"--out {folder} already holds a run ({names}); a match record is never written "
                             "over: continue it with --resume, start afresh with --fresh (the old folder is "
                             "moved aside), or use another --out folder")
    return Claim(folder, lock, moved)


def recorded_files(folder: Path) -> list[str]:
    """What a folder holds besides a lock file: anything there makes it a record not to be written over.
    Input copies with no manifest are a start that was killed before the run began: nothing recorded."""
    names = [path.name for path in folder.iterdir() if path.name != LOCK_FILE]
    return [] if names == [INPUTS_DIR] else names


def _aside(folder: Path) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    for n in range(1000):
        candidate = folder.with_name(f"{folder.name}.replaced-{stamp}" + (f"-{n}" if n else ""))
        if not candidate.exists():
            return candidate
    raise RunFolderError(f"cannot find a free name to move {folder} aside; clean up {folder.parent}")
