# Sourced by the device scripts (lab/gpu/): make `import bankproof` work from this checkout without
# installing (the device machine has no network for pip). A folder of symbolic links puts the
# repository's folders under the one import name, exactly as the wheel does.
_BP_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
_BP_SHIM="$(mktemp -d)"
mkdir -p "$_BP_SHIM/bankproof"
for f in "$_BP_ROOT"/bankproof/*.py; do ln -s "$f" "$_BP_SHIM/bankproof/"; done
for d in models proofs gpu_checks verifier; do ln -s "$_BP_ROOT/$d" "$_BP_SHIM/bankproof/$d"; done
# The lab's own modules (`python3 -m lab.gpu.cp_async`) import from the root, after the shim.
export PYTHONPATH="$_BP_SHIM:$_BP_ROOT${PYTHONPATH:+:$PYTHONPATH}"
# Run from the repository root, Python would put it first on sys.path, and its bankproof/ folder
# (without the other four) would shadow the shim: keep the current folder off sys.path (3.11+).
export PYTHONSAFEPATH=1
