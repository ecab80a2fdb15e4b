#!/usr/bin/env bash
# Cuts a release (make release) into _output/release/<VERSION>/: the nginx-operator and etcd
# images for linux/amd64 and linux/arm64 as OCI image layouts with an SPDX SBOM each,
# install.yaml, the Helm chart and the OLM bundle, all naming the images by digest, a size
# report (images.txt), release.json, SHA256SUMS and cosign signatures made offline.
# docs/releasing.md says how to cut, verify and push a release.
#
# Environment:
#   VERSION          the release, vX.Y.Z or vX.Y.Z-pre (required)
#   REGISTRY         prefix of every image reference (default example.com, the base's)
#   KEY              cosign private key file, its password in COSIGN_PASSWORD. Unset: a
#                    throwaway key pair is generated into the release directory.
#   RELEASE_OUTPUT   where releases are written (default _output/release)
set -euo pipefail
umask 022

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "${ROOT}"
VERSION="${VERSION:-}"
REGISTRY="${REGISTRY:-example.com}"
REGISTRY="${REGISTRY%/}"
# No build metadata (+...): it is not allowed in an image tag.
[[ "${VERSION}" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
  { echo "VERSION='${VERSION}' is not a release version like v0.2.0 or v0.2.0-rc.0" >&2; exit 2; }
[[ "${REGISTRY}" =~ ^[A-Za-z0-9.-]+(:[0-9]+)?(/[a-z0-9._-]+)*$ ]] ||
  { echo "REGISTRY='${REGISTRY}' is not a registry host with an optional path, like registry.example.com/team" >&2; exit 2; }
OUTPUT="${RELEASE_OUTPUT:-${ROOT}/_output/release}"
OUT="${OUTPUT}/${VERSION}"
# The release is assembled in work/release and moved into place only when it verifies.
WORK="${OUTPUT}/.work-${VERSION}"
STAGE="${WORK}/release"
rm -rf "${WORK}" && mkdir -p "${STAGE}"
trap 'rm -rf "${WORK}"' EXIT
start=${SECONDS}
step() { echo "release $(printf '%-9s' "$1") ${*:2}"; }
banner() { printf '\n%s\n# %s\n%s\n\n' "${RULE}" "$*" "${RULE}" >&2; }
RULE="$(printf '#%.0s' {1..96})"

# Helm, cosign and the etcd the images need; then our program for the rest.
hack/tools/build.sh --release
HELM_BIN="" COSIGN_BIN=""
# shellcheck disable=SC1091
source "${TOOLS_BIN_DIR:-${ROOT}/hack/tools/bin}/env.sh"
[[ -x "${HELM_BIN}" && -x "${COSIGN_BIN}" ]] || { echo "hack/tools/build.sh --release built no helm or cosign" >&2; exit 1; }
# cosign signs and verifies with a key here, which needs nothing from Sigstore: a TUF mirror
# that cannot exist keeps it from even looking Sigstore's up (verify-blob would).
export TUF_ROOT="${WORK}/sigstore" TUF_MIRROR=file:///nonexistent
go -C hack/release build -trimpath -o "${ROOT}/bin/release" .
release() { "${ROOT}/bin/release" "$@"; }
cosign() { "${COSIGN_BIN}" "$@"; }

COMMIT="$(git rev-parse HEAD)"
TREE_STATE=clean
[[ -z "$(git status --porcelain --untracked-files=no)" ]] || TREE_STATE=dirty
# Images and SBOMs are dated with the commit, so the same commit gives the same images.
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}"
SOURCE_DATE="$(date -u -d "@${SOURCE_DATE_EPOCH}" +%Y-%m-%dT%H:%M:%SZ)"
if [[ "${TREE_STATE}" == dirty ]]; then
  banner "WARNING: the work tree has uncommitted changes: ${VERSION} is built from them (treeState dirty)"
fi

# The key first: a wrong password fails here, not after the images are built.
THROWAWAY=false
if [[ -n "${KEY:-}" ]]; then
  [[ -f "${KEY}" ]] || { echo "KEY=${KEY}: no such file" >&2; exit 2; }
  [[ -v COSIGN_PASSWORD ]] || { echo "KEY is set: set COSIGN_PASSWORD to its password (empty for none)" >&2; exit 2; }
  cosign public-key --key "${KEY}" --outfile "${STAGE}/cosign.pub" >/dev/null 2>"${WORK}/key.log" ||
    { cat "${WORK}/key.log" >&2; echo "KEY=${KEY}: cosign cannot read it with COSIGN_PASSWORD (wrong password?)" >&2; exit 1; }
else
  THROWAWAY=true
  COSIGN_PASSWORD="" cosign generate-key-pair --output-key-prefix "${STAGE}/cosign" >/dev/null 2>&1
  export COSIGN_PASSWORD=""
  KEY="${STAGE}/cosign.key"
  banner "NO KEY GIVEN: ${VERSION} is signed with a THROWAWAY key pair generated now; its private key is cosign.key in the release. Do not publish this release; cut it with KEY=<file> COSIGN_PASSWORD=..."
fi
step key "$( ${THROWAWAY} && echo "throwaway pair" || echo "${KEY}")"

# The three images as OCI image indexes. The archives are taken while no other build can
# replace or prune them (hack/images/build.sh takes the same lock).
# They are recorded in the release's own images.env: the shared one keeps naming what
# `make images` built, which tests and scripts deploy.
PLATFORMS="linux/amd64 linux/arm64" VERSION="${VERSION}" IMAGE_TAG="${VERSION}" IMAGES_ENV="${WORK}/images.env" \
  hack/images/build.sh nginx-operator etcd
IMAGES_OUT="${ROOT}/_output/images"
declare -A REPOSITORY TAG DIGEST
(
  flock 9
  # shellcheck disable=SC1091
  source "${WORK}/images.env"
  for name in nginx-operator nginx-exporter etcd; do
    case "${name}" in
      nginx-operator | nginx-exporter) archive="${IMAGES_OUT}/${name}-index-${VERSION}.tar" ;;
      etcd) archive="${ETCD_INDEX_ARCHIVE}" ;;
    esac
    mkdir -p "${STAGE}/images/${name}"
    tar -xf "${archive}" -C "${STAGE}/images/${name}"
    echo "${archive##*/}" >"${WORK}/${name}.archive"
  done
) 9>"${IMAGES_OUT}/.lock"
for name in nginx-operator nginx-exporter etcd; do
  archive="$(cat "${WORK}/${name}.archive")"
  # The repositories hack/images/build.sh names the images with; the tag is the archive's.
  case "${name}" in
    nginx-operator) REPOSITORY[${name}]="${REGISTRY}/nginx-operator" ;;
    *) REPOSITORY[${name}]="${REGISTRY}/nginx-operator/${name}" ;;
  esac
  tag="${archive#"${name}-index-"}"
  TAG[${name}]="${tag%.tar}"
  DIGEST[${name}]="$(release image -dir "${STAGE}" -layout "images/${name}" -name "${name}" \
    -repository "${REPOSITORY[${name}]}" -tag "${TAG[${name}]}" -sbom "sbom/${name}.spdx.json" \
    -created "${SOURCE_DATE}" -record "${WORK}/${name}.json")"
  step image "${REPOSITORY[${name}]}:${TAG[${name}]}@${DIGEST[${name}]} (from ${archive})"
done

# install.yaml and the bundle are rendered from the base through an overlay that pins the
# images by digest; kustomize loads a base only through a relative path.
mkdir -p "${WORK}/overlay"
cat >"${WORK}/overlay/kustomization.yaml" <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - $(realpath --relative-to="${WORK}/overlay" "${ROOT}/artifacts/deploy")
images:
  - {name: example.com/nginx-operator, newName: ${REPOSITORY[nginx-operator]}, digest: ${DIGEST[nginx-operator]}}
  - {name: example.com/nginx-operator/nginx-exporter, newName: ${REPOSITORY[nginx-exporter]}, digest: ${DIGEST[nginx-exporter]}}
  - {name: registry.k8s.io/etcd, newName: ${REPOSITORY[etcd]}, digest: ${DIGEST[etcd]}}
YAML
{
  echo "# nginx-operator ${VERSION} (${COMMIT}): artifacts/deploy with its images by digest."
  echo "# kubectl apply -f install.yaml, then hack/deploy-certs.sh (docs/operations.md)."
  kubectl kustomize "${WORK}/overlay"
} >"${STAGE}/install.yaml"
step install install.yaml

# The bundle generator stamped with the release's version, which names the CSV.
# Kept in bin/ like bin/release: go build links it again only for another version or source.
go -C hack build -trimpath -ldflags "-X github.com/example/nginx-operator/pkg/version.gitVersion=${VERSION}" -o "${ROOT}/bin/bundle-gen" ./bundle
"${ROOT}/bin/bundle-gen" -base "${WORK}/overlay" -out "${STAGE}/bundle" 2>"${WORK}/bundle.log" || { cat "${WORK}/bundle.log" >&2; exit 1; }
step bundle "bundle/ (OLM registry+v1, CSV nginx-operator.${VERSION})"

# The chart from a copy whose values pin every image (the tag for people, the digest for
# the runtime), packaged at the release's version.
mkdir -p "${WORK}/chart"
cp -r charts/nginx-operator "${WORK}/chart/"
release chart-values -values "${WORK}/chart/nginx-operator/values.yaml" \
  -set image.repository="${REPOSITORY[nginx-operator]}" -set image.tag="${TAG[nginx-operator]}@${DIGEST[nginx-operator]}" \
  -set exporterImage.repository="${REPOSITORY[nginx-exporter]}" -set exporterImage.tag="${TAG[nginx-exporter]}@${DIGEST[nginx-exporter]}" \
  -set etcd.image.repository="${REPOSITORY[etcd]}" -set etcd.image.tag="${TAG[etcd]}@${DIGEST[etcd]}"
"${HELM_BIN}" lint --quiet "${WORK}/chart/nginx-operator" >/dev/null
"${HELM_BIN}" package "${WORK}/chart/nginx-operator" --version "${VERSION#v}" --app-version "${VERSION}" -d "${STAGE}" >/dev/null
CHART="nginx-operator-${VERSION#v}.tgz"
# What the chart renders runs only images by digest.
unpinned="$("${HELM_BIN}" template nginx-operator "${STAGE}/${CHART}" | grep -E '^[[:space:]]+image:' | grep -v '@sha256:' || true)"
[[ -z "${unpinned}" ]] || { echo "the chart renders images not pinned by digest:" >&2; echo "${unpinned}" >&2; exit 1; }
step chart "${CHART}"

# A signature of each image's digest, made before any registry has it: cosign's
# simple-signing payload and its signature, which hack/release-push.sh attaches to the
# pushed image (cosign attach signature).
mkdir -p "${STAGE}/signatures"
for name in nginx-operator nginx-exporter etcd; do
  cosign generate "${REPOSITORY[${name}]}@${DIGEST[${name}]}" >"${STAGE}/signatures/${name}.payload.json"
  cosign sign-blob --yes --key "${KEY}" --tlog-upload=false --output-signature "${STAGE}/signatures/${name}.sig" \
    "${STAGE}/signatures/${name}.payload.json" >/dev/null 2>"${WORK}/sign.log" || { cat "${WORK}/sign.log" >&2; exit 1; }
done
step sign "signatures/ (every image digest)"

release manifest -dir "${STAGE}" -records "${WORK}/nginx-operator.json,${WORK}/nginx-exporter.json,${WORK}/etcd.json" -version "${VERSION}" \
  -commit "${COMMIT}" -tree-state "${TREE_STATE}" -source-date "${SOURCE_DATE}" -registry "${REGISTRY}" \
  -throwaway-key="${THROWAWAY}" -chart "${CHART}"
release sums -dir "${STAGE}"
cosign sign-blob --yes --key "${KEY}" --tlog-upload=false --output-signature "${STAGE}/SHA256SUMS.sig" \
  "${STAGE}/SHA256SUMS" >/dev/null 2>"${WORK}/sign.log" || { cat "${WORK}/sign.log" >&2; exit 1; }
step sums "SHA256SUMS, SHA256SUMS.sig, release.json, images.txt"

# The same checks as make verify-release, before the release replaces an earlier one.
release verify -dir "${STAGE}" -cosign "${COSIGN_BIN}"
rm -rf "${OUT}"
mv "${STAGE}" "${OUT}"
echo
cat "${OUT}/images.txt"
echo
step done "${OUT#"${ROOT}/"} ($(du -sh "${OUT}" | cut -f1), $(find "${OUT}" -type f | wc -l) files) in $((SECONDS - start))s; make verify-release RELEASE_DIR=${OUT#"${ROOT}/"} checks it"
${THROWAWAY} && banner "${VERSION} is signed with a THROWAWAY key (cosign.key in the release): not for publishing"
exit 0
