#!/usr/bin/env bash
# Imports image archives built by hack/images/build.sh into containerd, where the
# kubelet's CRI finds them (namespace k8s.io, unpacked for the default snapshotter).
#
# Usage: hack/images/import.sh [--address SOCKET] [--namespace NS] [--snapshotter NAME] [ARCHIVE...]
#   --address      containerd's socket (default: $CONTAINERD_ADDRESS or /run/containerd/containerd.sock)
#   --namespace    containerd namespace (default: k8s.io)
#   --snapshotter  snapshotter to unpack for (default: containerd's default, overlayfs)
#   ARCHIVE...     docker-archive or oci-archive files (default: every archive in
#                  _output/images/images.env)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
address="${CONTAINERD_ADDRESS:-/run/containerd/containerd.sock}"
namespace="k8s.io"
snapshotter=()
archives=()
while (($#)); do
  case "$1" in
    --address) address="$2"; shift 2 ;;
    --namespace) namespace="$2"; shift 2 ;;
    --snapshotter) snapshotter=(--snapshotter "$2"); shift 2 ;;
    -h|--help) sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    *) archives+=("$1"); shift ;;
  esac
done

if ((${#archives[@]} == 0)); then
  env_file="${ROOT}/_output/images/images.env"
  [[ -f "${env_file}" ]] || { echo "no ${env_file}: run make images (hack/images/build.sh) first" >&2; exit 1; }
  mapfile -t archives < <(sed -n 's/^[A-Z_]*_ARCHIVE=//p' "${env_file}")
fi
command -v ctr >/dev/null || { echo "ctr is required (Debian: apt-get install containerd)" >&2; exit 1; }
[[ -S "${address}" ]] || { echo "no containerd socket at ${address}" >&2; exit 1; }

for archive in "${archives[@]}"; do
  [[ -f "${archive}" ]] || { echo "no archive ${archive}" >&2; exit 1; }
  start=${SECONDS}
  # ctr prints the references it imported ("unpacking REF (sha256:...)...done").
  refs="$(ctr --address "${address}" -n "${namespace}" images import "${snapshotter[@]}" "${archive}" |
    sed -n 's/^unpacking \([^ ]*\) .*/\1/p' | paste -sd' ')"
  echo "imported ${refs:-?} from ${archive#"${ROOT}/"} in $((SECONDS - start))s"
done
