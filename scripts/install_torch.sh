#!/usr/bin/env bash
# Install torch into the venv, choosing the right build for this machine, before the rest of
# the requirements: pip would otherwise resolve plain "torch" from PyPI, which on Linux is a
# multi-GB CUDA build even on a machine with no GPU.
#   TORCH_SPEC   the requirement to satisfy (default "torch>=2.2"; CI sets "torch==2.13.0")
#   TORCH_INDEX  PyTorch's CPU wheel index, used on CPU-only Linux when no local wheel fits
set -euo pipefail
python=${1:?usage: install_torch.sh VENV_PYTHON}
spec=${TORCH_SPEC:-torch>=2.2}
cpu_index=${TORCH_INDEX:-https://download.pytorch.org/whl/cpu}

if "$python" - "$spec" <<'PY' 2>/dev/null; then
import sys
from importlib.metadata import version
from packaging.requirements import Requirement
req = Requirement(sys.argv[1])
sys.exit(0 if req.specifier.contains(version("torch").split("+")[0], prereleases=True) else 1)
PY
  echo "torch $("$python" -c 'import torch; print(torch.__version__)') already satisfies '$spec'"
  exit 0
fi

pip=("$python" -m pip install --progress-bar off)
if command -v nvidia-smi >/dev/null 2>&1 || [[ $(uname -s) == Darwin ]]; then
  # NVIDIA GPU: PyPI's ordinary CUDA wheel. macOS: PyPI's wheel is the CPU/MPS build.
  "${pip[@]}" "$spec"
elif "${pip[@]}" --no-index --no-deps "$spec" 2>/dev/null; then
  # A CPU wheel in a local wheelhouse (pip's find-links) fits; dependencies follow with the rest.
  echo "installed torch from a local wheelhouse"
else
  "${pip[@]}" --index-url "$cpu_index" "$spec"
fi
