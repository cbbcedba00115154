"""The shape of the code: packages import only the layers below them, no module imports itself back in a
circle, game-specific code lives in one place per layer, and the command line starts without the pipeline."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# each package and the project packages it may import (itself included); the order is the layering
LAYERS = {
    "rules": {"rules"},
    "record": {"rules", "record"},
    "calibration": {"rules", "calibration"},
    "vision": {"rules", "record", "calibration", "vision"},
    "review": {"rules", "record", "calibration", "vision", "review"},
    "simulation": {"rules", "calibration", "vision", "simulation"},
    "referee": {"rules", "record", "calibration", "vision", "review", "simulation", "referee"},
}
PURE = ("rules", "record")  # no numpy, no OpenCV, no model runtime: they read and write the record
HEAVY = ("numpy", "cv2", "onnxruntime", "scipy", "av", "pymunk", "skimage")
# where a game may be named in code: its rules package, its profile kind, its vision module, its simulator
PER_GAME = re.compile(r"^(rules/(starcluster|piratenbillard)/|calibration/(starcluster|piratenbillard)_profile\.py"
                      r"|vision/games/(starcluster|piratenbillard)\.py|simulation/(starcluster|piratenbillard)\w*\.py)")
GAME_BRANCH = re.compile(r"isinstance\([^)]*(StarCluster|Piratenbillard)Profile|[=!]= *['\"](starcluster|piratenbillard)['\"]"
                         r"|['\"](starcluster|piratenbillard)['\"] *[=!]=|\.game *[=!]= *['\"]")


def modules() -> dict[str, Path]:
    found = {}
    for package in LAYERS:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(path: Path, name: str, top_level_only: bool) -> set[str]:
    """The modules `path` imports (not under `if TYPE_CHECKING:`); only its module-level ones if asked."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
               and ast.unparse(node.test).endswith("TYPE_CHECKING") for n in ast.walk(node)}
    if top_level_only:
        skipped |= {id(n) for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                    for n in ast.walk(node)}
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found |= {base} | {f"{base}.{a.name}" for a in node.names}
    return found


def test_each_package_imports_only_the_layers_below_it():
    wrong = []
    for name, path in modules().items():
        package = name.split(".")[0]
        for imported in imports(path, name, top_level_only=False):
            top = imported.split(".")[0]
            if top in LAYERS and top not in LAYERS[package]:
                wrong.append(f"{name} imports {imported}")
            if package in PURE and top in HEAVY:
                wrong.append(f"{name} imports {imported} (the record's layers stay free of it)")
    assert wrong == []


def test_no_module_imports_itself_back_through_others():
    known = modules()
    graph = {name: {m for m in imports(path, name, top_level_only=True) if m in known} - {name}
             for name, path in known.items()}
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, f"import circle: {' -> '.join(path[path.index(module):] + (module,))}"
        if module not in done:
            for needed in sorted(graph[module]):
                if not module.startswith(needed + "."):  # a module imports its own package's __init__ first
                    visit(needed, path + (module,))
            done.add(module)

    for module in sorted(graph):
        visit(module, ())


def test_games_are_named_in_code_only_in_their_own_modules():
    branches = []
    for name, path in modules().items():
        relative = path.relative_to(ROOT).as_posix()
        if PER_GAME.match(relative):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if GAME_BRANCH.search(line):
                branches.append(f"{relative}:{number}: {line.strip()}")
    assert branches == []


@pytest.mark.parametrize("argv", [["--help"], ["replay", "--help"], ["run", "--help"]])
def test_the_command_line_builds_without_loading_the_pipeline(argv):
    """`referee --help` and the replay path load no numpy, OpenCV or model runtime (the import cost that made
    `referee --help` take 1.6 s); each subcommand imports what it needs when it runs."""
    code = ("import sys\nfrom referee.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            f"print(' '.join(sorted(set({HEAVY!r}) & set(sys.modules))), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stderr.strip() == ""
