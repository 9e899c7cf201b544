"""`make gpu-check`: the course on a CUDA machine.

1. Execute every notebook in a fresh kernel with NBHELPERS_DEVICE=cuda, writing the executed
   copies to a temporary folder (the stored notebooks, made on the CPU, are not touched).
2. Fail if a cell raises, or if a notebook's banner (the describe_environment() output)
   does not report "device: cuda".
3. Run benchmarks/bench_attention.py on the GPU.

    python scripts/gpu_check.py [--keep DIR] [notebooks ...]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import torch

ROOT = Path(__file__).resolve().parent.parent
from notebook_runner import run_notebook  # noqa: E402

GPU_ENV = {"NBHELPERS_DEVICE": "cuda", "PYTHONHASHSEED": "0", "MPLBACKEND": "Agg"}
ANSI_CODES = re.compile(r"\x1b\[[0-9;]*m")
BANNER = re.compile(r"^torch \S+ \| device: (\w+) = (.*)$", re.MULTILINE)


def banner_devices(notebook) -> list[tuple[str, str]]:
    """(device type, device name) of every banner printed in the notebook's outputs."""
    found = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            text = output.get("text", "") if output.get("output_type") == "stream" else ""
            if output.get("output_type") in ("execute_result", "display_data"):
                text = output.get("data", {}).get("text/plain", "")
            found.extend(BANNER.findall(text if isinstance(text, str) else "".join(text)))
    return found


def check_notebook(path: Path, out_dir: Path) -> str | None:
    """Execute one notebook on CUDA; return a failure message, or None when it passed."""
    try:
        notebook, seconds, _ = run_notebook(path, env=GPU_ENV)
    except Exception as error:  # nbclient's CellExecutionError names the cell and the trace
        trace = ANSI_CODES.sub("", str(error)).strip()
        return f"a cell failed: {type(error).__name__}: ...{trace[-1500:]}"
    nbformat.write(notebook, out_dir / path.name)
    devices = banner_devices(notebook)
    if not devices:
        return "no banner (describe_environment() output) found in the executed notebook"
    wrong = [f"{kind} = {name}" for kind, name in devices if kind != "cuda"]
    if wrong:
        return f"the banner reports {', '.join(wrong)}, not cuda"
    print(f"  ok   {path.name:45} {seconds:6.1f} s  on {devices[0][1]}")
    return None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/*.ipynb")
    parser.add_argument("--keep", type=Path, default=None, help="write executed copies here")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print(
            "gpu-check needs a CUDA GPU, and torch sees none here "
            f"(torch {torch.__version__}, CUDA build: {torch.version.cuda or 'no'})",
            file=sys.stderr,
        )
        return 2
    notebooks = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    out_dir = args.keep or Path(tempfile.mkdtemp(prefix="gpu-check-"))
    print(f"executing {len(notebooks)} notebooks with {GPU_ENV}; executed copies in {out_dir}")
    failures = {}
    for path in notebooks:
        problem = check_notebook(path, out_dir)
        if problem:
            failures[path.name] = problem
            print(f"  FAIL {path.name}: {problem}")
    print("\nbenchmarks/bench_attention.py on cuda:")
    bench = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "bench_attention.py"),
            "--device",
            "cuda",
            "--json",
            str(ROOT / "benchmarks" / "results" / "attention-cuda.json"),
        ],
        cwd=ROOT,
    )
    if bench.returncode:
        failures["bench_attention.py"] = f"exit code {bench.returncode}"
    if failures:
        print(f"\ngpu-check FAILED: {', '.join(failures)}", file=sys.stderr)
        return 1
    print(f"\ngpu-check passed: {len(notebooks)} notebooks on CUDA, attention benchmark ran")
    return 0


if __name__ == "__main__":
    sys.exit(main())
