#!/usr/bin/env bash
# Pushes a release (make release) to an OCI registry over TLS: each image's OCI layout as it
# is, so the registry serves the digests the release signed and pins; the release's cosign
# signatures attached to those digests (no key needed here); the chart as an OCI artifact
# under <registry>/charts. Images go to the release's repositories with its registry prefix
# replaced, e.g. example.com/nginx-operator -> 127.0.0.1:5000/nginx-operator. The release is
# verified first (hack/verify-release.sh), and each pushed digest checked.
#
# Usage: hack/release-push.sh REGISTRY_HOST RELEASE_DIR
#   REGISTRY_HOST  host[:port][/path], e.g. 127.0.0.1:5443
# Environment:
#   CA_FILE        the CA the registry's certificate is checked against (default: the system's)
#   PUBLIC_KEY     passed on to hack/verify-release.sh
set -euo pipefail

(($# == 2)) || { echo "usage: $0 REGISTRY_HOST RELEASE_DIR" >&2; exit 2; }
host="${1%/}" dir="${2%/}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
"${ROOT}/hack/verify-release.sh" "${dir}"
CRANE_BIN="" COSIGN_BIN="" HELM_BIN=""
# shellcheck disable=SC1091
source "${TOOLS_BIN_DIR:-${ROOT}/hack/tools/bin}/env.sh"
for bin in "${CRANE_BIN}" "${COSIGN_BIN}" "${HELM_BIN}"; do
  [[ -x "${bin}" ]] || { echo "no ${bin}: run hack/tools/build.sh --release" >&2; exit 1; }
done
ca_args=()
if [[ -n "${CA_FILE:-}" ]]; then
  [[ -f "${CA_FILE}" ]] || { echo "CA_FILE=${CA_FILE}: no such file" >&2; exit 2; }
  # crane has no CA flag; Go reads this instead of the system's roots, for crane and cosign.
  export SSL_CERT_FILE="${CA_FILE}"
  ca_args=(--ca-file "${CA_FILE}")
fi
# Attaching a signature made with a key needs nothing from Sigstore (see hack/verify-release.sh).
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
TUF_ROOT="${work}/sigstore" TUF_MIRROR=file:///nonexistent
export TUF_ROOT TUF_MIRROR

registry="" chart=()
while read -r kind name repository tag digest layout payload signature; do
  case "${kind}" in
    registry) registry="${name}" ;;
    chart) chart=("${name}" "${repository}" "${tag}") ;; # file, name, version
    image)
      dest="${host}/${repository#"${registry}/"}"
      pushed="$("${CRANE_BIN}" push "${dir}/${layout}" "${dest}:${tag}" 2>"${work}/push.log")" ||
        { cat "${work}/push.log" >&2; exit 1; }
      [[ "${pushed}" == "${dest}@${digest}" ]] ||
        { echo "${name}: the registry has ${pushed}, the release signed ${dest}@${digest}" >&2; exit 1; }
      "${COSIGN_BIN}" attach signature --payload "${dir}/${payload}" --signature "${dir}/${signature}" "${dest}@${digest}"
      echo "pushed  ${dest}:${tag}@${digest} (${name}, signature attached)"
      ;;
  esac
done < <("${ROOT}/bin/release" show -dir "${dir}")

out="$("${HELM_BIN}" push "${dir}/${chart[0]}" "oci://${host}/charts" "${ca_args[@]}" 2>&1)" || { echo "${out}" >&2; exit 1; }
echo "pushed  oci://${host}/charts/${chart[1]}:${chart[2]}@$(sed -n 's/^Digest: //p' <<<"${out}") (helm install --version ${chart[2]})"
