#!/usr/bin/env bash
# Renders the Helm chart charts/nginx-operator, the one hand-kept copy of every object
# nginx-operator installs, into the static manifests of artifacts/: the kustomize base
# artifacts/deploy (the chart's default values) and the objects the components under
# artifacts/overlays/components add (the chart with the value each stands for). The
# kustomizations and their patches stay hand-written; this script checks that each overlay
# renders exactly what the chart renders with the overlay's values. `make generate` runs it
# (hack/update-codegen.sh), `make verify` checks that its output is current.
#
# Needs Helm (the version pinned in hack/tools/ecosystem, built once into $TOOLS_BIN_DIR) and
# /usr/bin/kubectl (its kustomize; KUBECTL names another).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "${ROOT}"
CHART=charts/nginx-operator
NAMESPACE=nginx-operator-system
KUBECTL="${KUBECTL:-/usr/bin/kubectl}"
[[ -x "${KUBECTL}" ]] || { echo "no ${KUBECTL}: its kustomize checks the overlays (KUBECTL=... names another kubectl)" >&2; exit 1; }

TOOLS_ENV="${TOOLS_BIN_DIR:-${ROOT}/hack/tools/bin}/env.sh"
HELM_BIN=""
# shellcheck disable=SC1090
[[ -f "${TOOLS_ENV}" ]] && source "${TOOLS_ENV}"
if [[ ! -x "${HELM_BIN}" ]]; then
  hack/tools/build.sh --helm >&2
  # shellcheck disable=SC1090
  source "${TOOLS_ENV}"
fi

WORK="$(mktemp -d)"
trap 'rm -rf "${WORK}"' EXIT

# The data the chart embeds, which Helm can read only from inside the chart: copies of the
# alert rules (beside their promtool tests) and of the Grafana dashboard.
cp artifacts/overlays/components/prometheus/rules/nginx-operator.rules.yaml "${CHART}/files/nginx-operator.rules.yaml"
cp artifacts/monitoring/grafana-dashboard.json "${CHART}/files/grafana-dashboard.json"

# render <template prefix> <directory> [helm flags]: writes each template of the chart whose
# name starts with the prefix and renders anything with these flags into the directory,
# without the prefix, after removing what an earlier run wrote there (a template may have
# been renamed).
render() {
  local prefix="$1" dir="$2" out="${WORK}/render" file name
  shift 2
  rm -rf "${out}"
  "${HELM_BIN}" template nginx-operator "${CHART}" --namespace "${NAMESPACE}" "$@" --output-dir "${out}" >/dev/null
  { grep -l -x "# Generated from ${CHART}/templates/.* Do not edit." "${dir}"/*.yaml || true; } | xargs -r rm
  for file in "${out}/nginx-operator/templates/${prefix}"*.yaml; do
    name="$(basename "${file}")"
    {
      echo "# Generated from ${CHART}/templates/${name} by make generate. Do not edit."
      # Without Helm's source lines, the document separator before the first object, and the
      # white space an empty {{- with }} leaves.
      sed -e '/^# Source: /d' -e '1{/^---$/d}' -e '/^[[:space:]]*$/d' -e 's/[[:space:]]*$//' "${file}"
    } >"${dir}/${name#"${prefix}"}"
  done
}

# With the default values, only the base's templates render anything.
render "" artifacts/deploy
render cert-manager- artifacts/overlays/components/cert-manager --set certificates.source=cert-manager
render etcd-backup- artifacts/overlays/components/etcd-backup --set etcd.snapshots.enabled=true
render prometheus- artifacts/overlays/components/prometheus --set monitoring.enabled=true

# check <kustomization> [helm flags]: fails when kustomize renders other objects from the
# kustomization than the chart renders with these flags (plus the base's Namespace, which the
# chart leaves to whoever installs it). Both go through kustomize, which orders the objects
# and drops the comments.
ret=0
check() {
  local kustomization="$1"
  shift
  mkdir -p "${WORK}/chart"
  "${HELM_BIN}" template nginx-operator "${CHART}" --namespace "${NAMESPACE}" "$@" >"${WORK}/chart/chart.yaml"
  cp artifacts/deploy/00-namespace.yaml "${WORK}/chart/"
  printf 'resources: [00-namespace.yaml, chart.yaml]\n' >"${WORK}/chart/kustomization.yaml"
  if ! diff -u --label "helm template $*" --label "${kustomization}" \
      <("${KUBECTL}" kustomize "${WORK}/chart") <("${KUBECTL}" kustomize "${kustomization}") >&2; then
    echo "${kustomization} does not render what the chart renders with [$*]: change its kustomization (or the chart) until they agree" >&2
    ret=1
  fi
}
check artifacts/deploy
check artifacts/overlays/cert-manager --set certificates.source=cert-manager
check artifacts/overlays/prometheus --set monitoring.enabled=true
check artifacts/overlays/cert-manager-prometheus --set certificates.source=cert-manager --set monitoring.enabled=true
check artifacts/overlays/single-member-etcd --set etcd.members=1
check artifacts/overlays/etcd-backup --set etcd.snapshots.enabled=true
check artifacts/overlays/encryption-at-rest --set apiserver.encryptionConfig.secretName=nginx-operator-apiserver-encryption-config
check artifacts/overlays/namespaced --set 'controller.watchNamespaces={default}'
check artifacts/overlays/upgrade-window --set apiserver.emulatedVersion=0.1
exit "${ret}"
