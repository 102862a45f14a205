#!/usr/bin/env bash
# Install GVSOC (the PULP reference simulator) for the `gvsoc` target.
#
#   scripts/install-gvsoc.sh [PREFIX]      PREFIX defaults to ~/.local/share/ptl-gvsoc
#
# GVSOC is in no package registry, so this clones its public repositories at
# pinned commits and builds the pulp-open target. It is for users and for the
# GitHub workflow; .ci/run never runs it.
#
# Build dependencies (Debian 12): build-essential git cmake python3 python3-venv
#   apt-get install -y --no-install-recommends build-essential git cmake python3 python3-venv
# GVSOC's own Python packages go into PREFIX/venv from PyPI.
#
# One option differs from upstream: the pulp-open cores are built with a
# separate FP register file (upstream keeps floats in the integer registers,
# -DISS_SINGLE_REGFILE=1). Debian's riscv64-unknown-elf-gcc emits standard
# -mabi=ilp32f code with f-registers, which runs correctly, with real FPU
# instructions and their timing, only on that layout.
#
# Afterwards: export PTL_GVSOC=PREFIX (or put PREFIX/bin on PATH).
#
# PTL_GVSOC_GIT_BASE overrides where the repositories come from (default
# https://github.com/gvsoc); it must hold <name>.git for the top repository
# (gvsoc) and for every submodule the top names, e.g. a directory of mirrors.
# Took 7 min 55 s on a 2-core machine that ran other work too (680 s of user
# CPU); JOBS=N sets the parallelism.
set -euo pipefail

PREFIX="$(realpath -m "${1:-$HOME/.local/share/ptl-gvsoc}")"
GIT_BASE="${PTL_GVSOC_GIT_BASE:-https://github.com/gvsoc}"
# The top repository's commit; the submodule commits are the ones its tree records.
GVSOC_COMMIT=209c147cbd293d5c1590694e68c489122c777acc
# What this script builds beyond upstream; the harness checks PREFIX/VERSION
# for each (harness/targets/gvsoc/ reads this line).
FEATURES="separate-fp-regfile cluster-fpus cache-flush fcvt-s-h-rounding error-mapping"
JOBS="${JOBS:-$(nproc)}"
SRC="$PREFIX/src/gvsoc"

log() { printf 'install-gvsoc: %s\n' "$*"; }
die() { printf 'install-gvsoc: error: %s\n' "$*" >&2; exit 1; }

for tool in git cmake make g++ python3; do
    command -v "$tool" >/dev/null || die "$tool is missing; install the build dependencies listed at the top of $0"
done

# Repository URL for a GitHub-style URL named in .gitmodules: same name, our base.
repo_url() { echo "$GIT_BASE/$(basename "${1%.git}").git"; }

checkout() {  # checkout URL DIR COMMIT [PATHS-TO-SKIP...]
    local url=$1 dir=$2 commit=$3; shift 3
    if [ ! -d "$dir/.git" ]; then
        log "cloning $url"
        git clone -q --no-checkout "$url" "$dir"
        if [ $# -gt 0 ]; then
            git -C "$dir" sparse-checkout set --no-cone '/*' "${@/#/!/}"
        fi
    fi
    git -C "$dir" checkout -q --detach "$commit" \
        || die "commit $commit is not in $url"
}

mkdir -p "$PREFIX/src"
# The top's examples/ (large prebuilt binaries) play no part in the build.
checkout "$(repo_url gvsoc)" "$SRC" "$GVSOC_COMMIT" examples
git -C "$SRC" config -f .gitmodules --get-regexp '^submodule\..*\.path$' |
while read -r key path; do
    name=${key#submodule.}; name=${name%.path}
    url=$(git -C "$SRC" config -f .gitmodules --get "submodule.$name.url" | tr -d ' ')
    commit=$(git -C "$SRC" ls-tree HEAD "$path" | awk '{print $3}')
    [ -n "$commit" ] || die "the top repository records no commit for submodule $path"
    checkout "$(repo_url "$url")" "$SRC/$path" "$commit"
done

# The separate FP register file (see the header).
CORES="$SRC/pulp/pulp/cpu/iss/pulp_cores.py"
if grep -q "'-DISS_SINGLE_REGFILE=1'," "$CORES"; then
    sed -i "/'-DISS_SINGLE_REGFILE=1',/d" "$CORES"
fi
if grep -q SINGLE_REGFILE "$CORES"; then
    die "$CORES still selects the single register file; the patch no longer applies"
fi

# Four patches of ours (scripts/gvsoc/), each applied once:
# - cluster-fpus.patch (gvsoc-pulp): the cluster's FPU count as a run-time
#   choice: upstream's 4 FPUs shared by the 8 cores (core i uses FPU i mod 4)
#   unless PTL_GVSOC_CLUSTER_FPUS=8 gives every core its own, as on the
#   cluster the PULP-TrainLib paper measured. One build serves both.
# - cache-flush.patch (gvsoc-core): a flushed cache also restarts the LFSR of
#   its pseudo-random replacement. The runtime flushes the instruction cache
#   before every measured region, so a variant's cycles depend on nothing that
#   ran before it (README, "The GVSOC target").
# - fcvt-s-h-rounding.patch (gvsoc-core): fcvt.s.h's decoder also extracts
#   the rounding-mode field its handler reads. Without it the handler read a
#   stale immediate, and some FP16 runs stopped at random with GVSOC's
#   "Unimplemented roudning mode nearest ties to max magnitude" (exit 255).
# - error-mapping.patch (gvsoc-core): a router's "error" mapping answers an
#   access it covers that no other mapping holds. Upstream never looked at it,
#   so an access in the cluster's range outside L1 and the peripherals (one
#   word past the end of L1, say) went to the default route, the SoC, which
#   sent it back to the cluster: GVSOC spun forever at one simulated instant,
#   where no in-simulation watchdog can see it. Now it is GVSOC's "Invalid
#   access" (a crash naming the address and the pc).
PATCHES="$(dirname "$(realpath "$0")")/gvsoc"
apply_once() {  # apply_once DIR PATCH MARKER-FILE MARKER
    if ! grep -q "$4" "$1/$3"; then
        git -C "$1" apply "$PATCHES/$2" || die "$PATCHES/$2 no longer applies to $1"
    fi
}
apply_once "$SRC/pulp" cluster-fpus.patch pulp/cpu/iss/pulp_iss_wrapper.cpp PTL_GVSOC_CLUSTER_FPUS
apply_once "$SRC/core" cache-flush.patch models/cache/cache_impl.cpp "PTL patch"
apply_once "$SRC/core" fcvt-s-h-rounding.patch models/cpu/iss/isa_gen/isa_smallfloats.py "PTL patch"
apply_once "$SRC/core" error-mapping.patch engine/src/mapping_tree.cpp "PTL patch"

log "Python packages into $PREFIX/venv"
python3 -m venv "$PREFIX/venv"
# GVSOC's own lists, plus typing_extensions, which gvrun imports without listing it.
"$PREFIX/venv/bin/pip" install -q --disable-pip-version-check \
    -r "$SRC/core/requirements.txt" -r "$SRC/gvrun/requirements.txt" typing_extensions

log "building pulp-open with $JOBS jobs (a few minutes)"
(
    export PATH="$PREFIX/venv/bin:$PATH"
    make -C "$SRC" build TARGETS=pulp-open CMAKE_FLAGS="-j $JOBS" \
        BUILDDIR="$PREFIX/build" INSTALLDIR="$PREFIX/install"
)

# The launcher the harness finds: GVSOC's own, run with our venv's Python.
mkdir -p "$PREFIX/bin"
cat > "$PREFIX/bin/gvsoc" <<EOF
#!/usr/bin/env bash
# Written by scripts/install-gvsoc.sh (GVSOC $GVSOC_COMMIT: $FEATURES).
export PATH="$PREFIX/venv/bin:\$PATH"
exec "$PREFIX/install/bin/gvsoc" "\$@"
EOF
chmod +x "$PREFIX/bin/gvsoc"
echo "$GVSOC_COMMIT $FEATURES" > "$PREFIX/VERSION"
log "done: export PTL_GVSOC=$PREFIX"
