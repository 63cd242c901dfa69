"""Parsing one submission in a child process of the grader: ``python -I _read.py SUFFIX < FILE > OUT``.

Run as a script (nbformat and jupytext, no part of the kit), under the memory, CPU, file-size and wall-clock
limits :func:`evalkit.course.worker.read_submission` sets: parsing a hostile file can cost memory and time out
of all proportion to its size (a YAML alias bomb in a MyST file's front matter or a cell's options, expanded
when the notebook is copied or written), and that cost falls on this process, never on the grader's. Writes
one JSON object to its standard output: ``{"notebook": ..., "written": N}`` (nbformat 4, validated when it came
as ``.ipynb``, and the length of its text as the grader writes it for the run) or ``{"error": "TypeName:
message"}``.
"""
import json
import sys


MAX_DEPTH = 32
MAX_NODES = 500_000  # values of every kind; an executed chapter holds under 10,000


def _shape(node) -> tuple[int, int]:
    """How deep ``node``'s dicts and lists nest, and how many values it holds, counted no further than past
    :data:`MAX_DEPTH` or :data:`MAX_NODES` (without recursion: a hostile file may nest thousands deep)."""
    deepest, count, stack = 0, 1, [(node, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        for child in children:
            count += 1
            if count > MAX_NODES:
                return deepest, count
            if isinstance(child, (dict, list)):
                if depth + 1 > MAX_DEPTH:
                    return depth + 1, count
                deepest = max(deepest, depth + 1)
                stack.append((child, depth + 1))
    return max(deepest, 1), count


def main() -> int:
    suffix = sys.argv[1]
    data = sys.stdin.buffer.read()
    try:
        import nbformat

        if suffix == ".ipynb":
            notebook = nbformat.reads(data.decode("utf-8"), as_version=4)
            nbformat.validate(notebook)
        elif suffix == ".md":
            import jupytext

            notebook = jupytext.reads(data.decode("utf-8"), fmt="md:myst")
        else:
            raise ValueError(f"no reader for {suffix[:20]!r} files")
        deepest, count = _shape(notebook)
        if deepest > MAX_DEPTH:  # indented for its run, each level costs every line below it: tens of times the size
            raise ValueError(f"its JSON is nested {deepest} deep (a notebook needs at most {MAX_DEPTH})")
        if count > MAX_NODES:  # each value costs the grader's process tens of bytes, whatever its size on disk
            raise ValueError(f"it holds more than {MAX_NODES:,} values (a chapter holds under 10,000)")
        # how long it is once written out for its run (indented: each level repeats on every line below it)
        text = json.dumps({"notebook": notebook, "written": len(nbformat.writes(notebook))})
    except Exception as error:  # JSON errors, schema errors, undecodable bytes, MemoryError, RecursionError
        text = json.dumps({"error": f"{type(error).__name__}: {str(error)[:400]}"})
    sys.stdout.write(text)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
