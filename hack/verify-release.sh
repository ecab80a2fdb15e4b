#!/usr/bin/env bash
# Checks a release directory offline (make verify-release): SHA256SUMS matches every file
# and names no missing or extra one, the cosign signatures verify, each image layout is a
# valid OCI image index for linux/amd64 and linux/arm64 whose digest is the one release.json,
# install.yaml, the chart and the bundle name, each SBOM parses and names that digest, and
# install.yaml names images by digest only. Prints every problem; exits 1 if there is one.
#
# Usage: hack/verify-release.sh [RELEASE_DIR]   (default: the newest under _output/release)
# Environment:
#   PUBLIC_KEY   the cosign public key the signatures must verify with (default: the
#                release's own cosign.pub, which only proves the release is consistent)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
dir="${1:-}"
if [[ -z "${dir}" ]]; then
  dir="$(ls -dt "${ROOT}"/_output/release/v*/ 2>/dev/null | head -n1)"
  [[ -n "${dir}" ]] || { echo "no release under _output/release: make release VERSION=vX.Y.Z first, or give RELEASE_DIR" >&2; exit 2; }
  dir="${dir%/}"
fi
[[ -f "${dir}/release.json" ]] || { echo "${dir} is not a release directory (no release.json)" >&2; exit 2; }

# cosign verifies the signatures; only its build is needed, the rest of --release is cached
# or cheap next to it.
"${ROOT}/hack/tools/build.sh" --release >/dev/null
COSIGN_BIN=""
# shellcheck disable=SC1091
source "${TOOLS_BIN_DIR:-${ROOT}/hack/tools/bin}/env.sh"
[[ -x "${COSIGN_BIN}" ]] || { echo "hack/tools/build.sh --release built no cosign" >&2; exit 1; }
# Verifying with a key needs nothing from Sigstore: a TUF mirror that cannot exist keeps
# cosign from looking Sigstore's up, so the check stays offline.
TUF_ROOT="$(mktemp -d)" TUF_MIRROR=file:///nonexistent
export TUF_ROOT TUF_MIRROR
trap 'rm -rf "${TUF_ROOT}"' EXIT
go -C "${ROOT}/hack/release" build -trimpath -o "${ROOT}/bin/release" .

echo "verify-release ${dir} with $([[ -n "${PUBLIC_KEY:-}" ]] && echo "${PUBLIC_KEY}" || echo "its own cosign.pub")"
if "${ROOT}/bin/release" verify -dir "${dir}" -cosign "${COSIGN_BIN}" ${PUBLIC_KEY:+-public-key "${PUBLIC_KEY}"}; then
  echo "verify-release: OK: $(sed -n 's/^  "version": "\(.*\)",$/\1/p' "${dir}/release.json"): $(wc -l <"${dir}/SHA256SUMS") files in SHA256SUMS, signatures, images, SBOMs and references"
else
  echo "verify-release: ${dir} FAILED (problems above)" >&2
  exit 1
fi
