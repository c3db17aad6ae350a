"""Every Python block of README.md and docs/*.md runs as written.

A reader pastes a block into a fresh interpreter, so each block runs in its own process, in a
scratch directory, on the sim driver, and must exit cleanly. An HTML comment on the line right
before a fence (invisible in the rendered page) steers it:

    <!-- docs-test: file NAME -->     the block (C++, CUDA, CMake...) is written to NAME in the
                                      scratch directory of the same page's later Python blocks
    <!-- docs-test: skip REASON -->   the block does not run here; REASON says why and which test
                                      covers it (several processes, a GPU)
"""

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```(\w*)\s*$")
_DIRECTIVE = re.compile(r"^<!-- docs-test: (file|skip) (.+?) -->\s*$")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence
    language: str
    text: str
    directive: tuple[str, str] | None  # ("file", name) | ("skip", reason)

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The page's fenced blocks that start at column 0, with the directive before each."""
    lines = page.read_text().splitlines()
    out, i = [], 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].rstrip() == "```"), None)
        assert end is not None, f"{page.relative_to(ROOT)}:{i + 1}: unclosed code block"
        directive = _DIRECTIVE.match(lines[i - 1]) if i else None
        out.append(Block(page, i + 1, opening.group(1), "\n".join(lines[i + 1:end]) + "\n",
                         directive.groups() if directive else None))
        i = end + 1
    return out


PYTHON_BLOCKS = [b for page in PAGES for b in blocks(page) if b.language == "python"]


def test_directives_are_well_formed():
    """A misspelt directive would silently run (or silently not skip) a block."""
    for page in PAGES:
        for number, line in enumerate(page.read_text().splitlines(), 1):
            if "docs-test" in line:
                assert _DIRECTIVE.match(line), f"{page.relative_to(ROOT)}:{number}: {line!r}"


def test_the_docs_have_python_blocks():
    assert len(PYTHON_BLOCKS) >= 5, [b.id for b in PYTHON_BLOCKS]


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=lambda b: b.id)
def test_python_block_runs_as_written(block, tmp_path):
    if block.directive and block.directive[0] == "skip":
        pytest.skip(block.directive[1])
    for earlier in blocks(block.page):
        if earlier.line < block.line and earlier.directive and earlier.directive[0] == "file":
            (tmp_path / earlier.directive[1]).write_text(earlier.text)
    env = dict(os.environ, TORCH_FOO_DRIVER="sim", TORCH_EXTENSIONS_DIR=str(tmp_path / "extensions"))
    result = subprocess.run([sys.executable, "-c", block.text], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, f"{block.id} failed:\n{block.text}\n{result.stdout[-3000:]}{result.stderr[-5000:]}"
