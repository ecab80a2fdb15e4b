#!/usr/bin/env bash
# Builds the pinned control-plane binaries used by `make up` and the e2e tests into
# hack/tools/bin/<name>-<version>/ (git-ignored). Cached binaries are reused, so only
# the first run on a machine pays for the build. With --node it also builds what the
# optional real node runs: kubelet, kube-proxy and CoreDNS.
set -euo pipefail

TOOLS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
BIN_DIR="${TOOLS_BIN_DIR:-${TOOLS_DIR}/bin}"
cd "${TOOLS_DIR}"
# Test suites start stacks in parallel and each runs this script: one build at a time per
# cache, so two never write the same binary and none reads env.sh while another writes it.
mkdir -p "${BIN_DIR}"
exec 9>"${BIN_DIR}/.lock"
flock 9

K8S_VERSION="$(go list -m -f '{{.Version}}' k8s.io/kubernetes)"
ETCD_VERSION="$(go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)"
KWOK_VERSION="v0.8.0"
COREDNS_VERSION="v1.14.7"
METRICS_SERVER_VERSION="v0.9.0"
# Helm 3.21 is built on Kubernetes 1.36 libraries, as old as the test cluster (3.22 needs 1.37).
HELM_VERSION="v3.21.4"
# OLM v0's olm-operator, from the module hack/tools/olm pins (its Kubernetes libraries are 1.36's).
OLM_VERSION="$(go -C "${TOOLS_DIR}/olm" list -m -f '{{.Version}}' github.com/operator-framework/operator-lifecycle-manager)"
# cert-manager's issuing controllers and CA injector, from the module hack/tools/cert-manager
# pins (its own small main: cert-manager's command modules are not on the module proxy).
CERT_MANAGER_VERSION="$(go -C "${TOOLS_DIR}/cert-manager" list -m -f '{{.Version}}' github.com/cert-manager/cert-manager)"
# The Prometheus Operator with its config reloader, and the Prometheus server its go.mod
# selects (inside the operator's supported range), from the module hack/tools/prometheus-operator pins.
PROMETHEUS_OPERATOR_VERSION="$(go -C "${TOOLS_DIR}/prometheus-operator" list -m -f '{{.Version}}' github.com/prometheus-operator/prometheus-operator)"
PROMETHEUS_VERSION="$(go -C "${TOOLS_DIR}/prometheus-operator" list -m -f '{{.Version}}' github.com/prometheus/prometheus)"
WITH_NODE=false
[[ "${1:-}" == "--node" ]] && WITH_NODE=true

K8S_DIR="${BIN_DIR}/kubernetes-${K8S_VERSION}"
ETCD_DIR="${BIN_DIR}/etcd-${ETCD_VERSION}"
KWOK_DIR="${BIN_DIR}/kwok-${KWOK_VERSION}"

# Kubernetes stamps its version through ldflags; without them binaries report v0.0.0-master.
minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
LDFLAGS="-s -w -X k8s.io/component-base/version.gitVersion=${K8S_VERSION}"
LDFLAGS+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor}"
LDFLAGS+=" -X k8s.io/component-base/version.gitTreeState=clean"

# build <output> <package> [ldflags] [module]: module is a directory under hack/tools with a
# go.mod of its own, for a tool whose dependency graph must stay apart from this one's.
build() {
  local out="$1" pkg="$2" ldflags="${3:-}" module="${4:-.}"
  if [[ -x "${out}" ]]; then
    echo "cached  ${out#"${BIN_DIR}/"}"
    return
  fi
  local start=${SECONDS}
  mkdir -p "$(dirname "${out}")"
  go -C "${TOOLS_DIR}/${module}" build -trimpath -ldflags "${ldflags}" -o "${out}.tmp" "${pkg}"
  mv "${out}.tmp" "${out}"
  echo "built   ${out#"${BIN_DIR}/"} in $((SECONDS - start))s"
}

build "${ETCD_DIR}/etcd" go.etcd.io/etcd/server/v3 "-s -w"
# etcd's own clients at the same version, as the etcd images ship them: etcdctl for member
# operations and snapshots, etcdutl for restores and offline checks.
build "${ETCD_DIR}/etcdctl" go.etcd.io/etcd/etcdctl/v3 "-s -w"
build "${ETCD_DIR}/etcdutl" go.etcd.io/etcd/etcdutl/v3 "-s -w"
K8S_CMDS=(kube-apiserver kube-controller-manager kube-scheduler)
${WITH_NODE} && K8S_CMDS+=(kubelet kube-proxy)
for cmd in "${K8S_CMDS[@]}"; do
  build "${K8S_DIR}/${cmd}" "k8s.io/kubernetes/cmd/${cmd}" "${LDFLAGS}"
done

# install <dir> <binary> <module>@<version> [ldflags]: a tool with a dependency graph of its
# own, installed from its module rather than built in this one.
install() {
  local dir="$1" bin="$2" pkg="$3" ldflags="-s -w ${4:-}"
  if [[ -x "${dir}/${bin}" ]]; then
    echo "cached  ${dir#"${BIN_DIR}/"}/${bin}"
    return
  fi
  local start=${SECONDS}
  rm -rf "${dir}.tmp" && mkdir -p "${dir}.tmp" "${dir}"
  CGO_ENABLED=0 GOBIN="${dir}.tmp" GOFLAGS= go install -trimpath -ldflags "${ldflags}" "${pkg}"
  mv "${dir}.tmp/${bin}" "${dir}/${bin}" && rmdir "${dir}.tmp"
  echo "built   ${dir#"${BIN_DIR}/"}/${bin} in $((SECONDS - start))s"
}

COREDNS_DIR="${BIN_DIR}/coredns-${COREDNS_VERSION}"
OLM_DIR="${BIN_DIR}/olm-${OLM_VERSION}"
# Keyed by the service discovery Prometheus is built with (see below).
PROMETHEUS_OPERATOR_DIR="${BIN_DIR}/prometheus-operator-${PROMETHEUS_OPERATOR_VERSION}-prometheus-${PROMETHEUS_VERSION}-kubernetes-sd"
# Keyed by our main and its dependencies too: they are ours, not the release's.
CERT_MANAGER_DIR="${BIN_DIR}/cert-manager-${CERT_MANAGER_VERSION}-$(cat cert-manager/main.go cert-manager/go.sum | sha256sum | cut -c1-12)"
METRICS_SERVER_DIR="${BIN_DIR}/metrics-server-${METRICS_SERVER_VERSION}"
if ${WITH_NODE}; then
  install "${COREDNS_DIR}" coredns "github.com/coredns/coredns@${COREDNS_VERSION}"
  # metrics-server serves kubectl top and the HPAs on the real node.
  install "${METRICS_SERVER_DIR}" metrics-server "sigs.k8s.io/metrics-server/cmd/metrics-server@${METRICS_SERVER_VERSION}"
  # OLM installs the bundle on the real node (its CRDs are copied from the same module below).
  build "${OLM_DIR}/olm" github.com/operator-framework/operator-lifecycle-manager/cmd/olm "-s -w" olm
  if [[ ! -d "${OLM_DIR}/crds" ]]; then
    src="$(go -C "${TOOLS_DIR}/olm" list -m -f '{{.Dir}}' github.com/operator-framework/operator-lifecycle-manager)"
    rm -rf "${OLM_DIR}/crds.tmp" && cp -r "${src}/deploy/chart/crds" "${OLM_DIR}/crds.tmp"
    chmod -R u+w "${OLM_DIR}/crds.tmp" && mv "${OLM_DIR}/crds.tmp" "${OLM_DIR}/crds"
    echo "copied  olm-${OLM_VERSION}/crds"
  fi
  # cert-manager issues the cert-manager overlay's certificates on the real node.
  build "${CERT_MANAGER_DIR}/cert-manager" . "-s -w" cert-manager
  if [[ ! -d "${CERT_MANAGER_DIR}/crds" ]]; then
    src="$(go -C "${TOOLS_DIR}/cert-manager" list -m -f '{{.Dir}}' github.com/cert-manager/cert-manager)"
    rm -rf "${CERT_MANAGER_DIR}/crds.tmp" && cp -r "${src}/deploy/crds" "${CERT_MANAGER_DIR}/crds.tmp"
    chmod -R u+w "${CERT_MANAGER_DIR}/crds.tmp" && rm "${CERT_MANAGER_DIR}/crds.tmp/README.md"
    mv "${CERT_MANAGER_DIR}/crds.tmp" "${CERT_MANAGER_DIR}/crds"
    echo "copied  ${CERT_MANAGER_DIR#"${BIN_DIR}/"}/crds"
  fi
  # The Prometheus Operator turns the prometheus overlay into a Prometheus pod on the real
  # node. Prometheus' module versions v0.3XX.Y are its releases 3.XX.Y; the version
  # stamps are what `prometheus --version` and the operator read.
  prom_minor="${PROMETHEUS_VERSION#v0.3}"
  prom_release="3.$((10#${prom_minor%%.*})).${prom_minor#*.}"
  # Static, for the scratch image hack/images/build.sh makes of the server and the reloader.
  CGO_ENABLED=0 build "${PROMETHEUS_OPERATOR_DIR}/operator" github.com/prometheus-operator/prometheus-operator/cmd/operator \
    "-s -w -X github.com/prometheus/common/version.Version=${PROMETHEUS_OPERATOR_VERSION#v}" prometheus-operator
  CGO_ENABLED=0 build "${PROMETHEUS_OPERATOR_DIR}/prometheus-config-reloader" github.com/prometheus-operator/prometheus-operator/cmd/prometheus-config-reloader \
    "-s -w -X github.com/prometheus/common/version.Version=${PROMETHEUS_OPERATOR_VERSION#v}" prometheus-operator
  # Only the Kubernetes service discovery the operator's configuration uses: Prometheus' build
  # tags leave out the other discoveries and the cloud SDKs they compile in.
  CGO_ENABLED=0 GOFLAGS=-tags=remove_all_sd,enable_kubernetes_sd build "${PROMETHEUS_OPERATOR_DIR}/prometheus" github.com/prometheus/prometheus/cmd/prometheus \
    "-s -w -X github.com/prometheus/common/version.Version=${prom_release}" prometheus-operator
  if [[ ! -d "${PROMETHEUS_OPERATOR_DIR}/crds" ]]; then
    src="$(go -C "${TOOLS_DIR}/prometheus-operator" list -m -f '{{.Dir}}' github.com/prometheus-operator/prometheus-operator)"
    rm -rf "${PROMETHEUS_OPERATOR_DIR}/crds.tmp" && cp -r "${src}/example/prometheus-operator-crd" "${PROMETHEUS_OPERATOR_DIR}/crds.tmp"
    chmod -R u+w "${PROMETHEUS_OPERATOR_DIR}/crds.tmp" && mv "${PROMETHEUS_OPERATOR_DIR}/crds.tmp" "${PROMETHEUS_OPERATOR_DIR}/crds"
    echo "copied  ${PROMETHEUS_OPERATOR_DIR#"${BIN_DIR}/"}/crds"
  fi
fi
install "${KWOK_DIR}" kwok "sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}"
# Helm renders and lints charts/nginx-operator (test/manifests) and installs it on the real node.
HELM_DIR="${BIN_DIR}/helm-${HELM_VERSION}"
install "${HELM_DIR}" helm "helm.sh/helm/v3/cmd/helm@${HELM_VERSION}" "-X helm.sh/helm/v3/internal/version.version=${HELM_VERSION}"
# The Stages kwok applies, shipped in its module: nodes turn Ready and then renew their
# Lease and status like kubelet; pods run. Copied whenever one is missing, so a cache
# made with fewer stages is completed.
KWOK_STAGES=(node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease
  pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete)
for stage in "${KWOK_STAGES[@]}"; do
  [[ -f "${KWOK_DIR}/stages/${stage##*/}.yaml" ]] && continue
  src="$(GOFLAGS= go mod download -json "sigs.k8s.io/kwok@${KWOK_VERSION}" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
  mkdir -p "${KWOK_DIR}/stages"
  cp "${src}/kustomize/stage/${stage}.yaml" "${KWOK_DIR}/stages/${stage##*/}.yaml.tmp"
  chmod u+w "${KWOK_DIR}/stages/${stage##*/}.yaml.tmp"
  mv "${KWOK_DIR}/stages/${stage##*/}.yaml.tmp" "${KWOK_DIR}/stages/${stage##*/}.yaml"
  echo "copied  kwok-${KWOK_VERSION}/stages/${stage##*/}.yaml"
done

# Consumers read this file to find the binaries; it is replaced whole, never rewritten in place.
cat > "${BIN_DIR}/env.sh.tmp" <<ENV
KUBE_BIN_DIR=${K8S_DIR}
ETCD_BIN=${ETCD_DIR}/etcd
ETCDCTL_BIN=${ETCD_DIR}/etcdctl
ETCDUTL_BIN=${ETCD_DIR}/etcdutl
KWOK_BIN=${KWOK_DIR}/kwok
KWOK_STAGES_DIR=${KWOK_DIR}/stages
COREDNS_BIN=${COREDNS_DIR}/coredns
METRICS_SERVER_BIN=${METRICS_SERVER_DIR}/metrics-server
HELM_BIN=${HELM_DIR}/helm
OLM_BIN=${OLM_DIR}/olm
OLM_CRDS_DIR=${OLM_DIR}/crds
CERT_MANAGER_BIN=${CERT_MANAGER_DIR}/cert-manager
CERT_MANAGER_CRDS_DIR=${CERT_MANAGER_DIR}/crds
PROMETHEUS_OPERATOR_BIN=${PROMETHEUS_OPERATOR_DIR}/operator
PROMETHEUS_CONFIG_RELOADER_BIN=${PROMETHEUS_OPERATOR_DIR}/prometheus-config-reloader
PROMETHEUS_BIN=${PROMETHEUS_OPERATOR_DIR}/prometheus
PROMETHEUS_OPERATOR_CRDS_DIR=${PROMETHEUS_OPERATOR_DIR}/crds
ENV
mv "${BIN_DIR}/env.sh.tmp" "${BIN_DIR}/env.sh"
