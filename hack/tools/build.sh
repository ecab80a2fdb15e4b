#!/usr/bin/env bash
# Builds the pinned control-plane binaries used by `make up` and the e2e tests into
# hack/tools/bin/<name>-<version>/ (git-ignored). Cached binaries are reused, so only
# the first run on a machine pays for the build. With --node it also builds what the
# optional real node runs (kubelet, kube-proxy and CoreDNS) and what its test cuts, signs
# and pushes a release with (cosign, an OCI registry, crane). With --release only what
# `make release` and hack/release-push.sh run: etcd (its image), Helm, cosign, an OCI
# registry and crane. With --helm only Helm, which `make generate` renders the chart with.
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
# The other projects' components are pinned once, in the module hack/tools/ecosystem: one
# dependency graph for all of them, so the packages they share are compiled once.
ECOSYSTEM_DIR="${TOOLS_DIR}/ecosystem"
ecosystem_version() { go -C "${ECOSYSTEM_DIR}" list -m -f '{{.Version}}' "$1"; }
# ecosystem_module_dir <module>: where the module's files are, downloading it if need be.
ecosystem_module_dir() { go -C "${ECOSYSTEM_DIR}" mod download -json "$1" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p'; }
KWOK_VERSION="$(ecosystem_version sigs.k8s.io/kwok)"
COREDNS_VERSION="$(ecosystem_version github.com/coredns/coredns)"
METRICS_SERVER_VERSION="$(ecosystem_version sigs.k8s.io/metrics-server)"
# Helm 3.21 is built on Kubernetes 1.36 libraries, as old as the test cluster (3.22 needs 1.37).
HELM_VERSION="$(ecosystem_version helm.sh/helm/v3)"
# What signs and serves a release, pinned in hack/tools/release: a graph of their own, so that
# they change neither the ecosystem tools' versions nor their cache keys.
RELEASE_TOOLS_DIR="${TOOLS_DIR}/release"
# Read from go.mod (tidy, so it lists every module it selects): `go list -m` would load the
# whole graph, a download on a fresh machine where only the other tools are wanted.
release_version() { awk -v m="$1" '$1 == m { print $2 }' "${RELEASE_TOOLS_DIR}/go.mod"; }
RELEASE_DIGEST="$(sha256sum <"${RELEASE_TOOLS_DIR}/go.sum" | cut -c1-12)"
# OLM v0's olm-operator.
OLM_VERSION="$(ecosystem_version github.com/operator-framework/operator-lifecycle-manager)"
# cert-manager's issuing controllers and CA injector (a small main of ours: cert-manager's
# command modules are not on the module proxy).
CERT_MANAGER_VERSION="$(ecosystem_version github.com/cert-manager/cert-manager)"
# The Prometheus Operator with its config reloader, and the Prometheus server inside the
# operator's supported range.
PROMETHEUS_OPERATOR_VERSION="$(ecosystem_version github.com/prometheus-operator/prometheus-operator)"
PROMETHEUS_VERSION="$(ecosystem_version github.com/prometheus/prometheus)"
# A binary is reused only if it was built against the same dependency versions: the
# ecosystem tools' cache directories carry a digest of the module's go.sum (and, for
# cert-manager, of our main).
ECOSYSTEM_DIGEST="$(sha256sum <"${ECOSYSTEM_DIR}/go.sum" | cut -c1-12)"
# --node: also what the real node runs; --run: only what `make run` runs on kwok's nodes
# (no Helm); --release: only what a release is cut and pushed with; --helm: only Helm.
WITH_NODE=false RUN_ONLY=false RELEASE_ONLY=false HELM_ONLY=false
case "${1:-}" in
  --node) WITH_NODE=true ;;
  --run) RUN_ONLY=true ;;
  --release) RELEASE_ONLY=true ;;
  --helm) HELM_ONLY=true ;;
  "") ;;
  *) echo "usage: $0 [--node|--run|--release|--helm]" >&2; exit 2 ;;
esac

K8S_DIR="${BIN_DIR}/kubernetes-${K8S_VERSION}"
ETCD_DIR="${BIN_DIR}/etcd-${ETCD_VERSION}"

# Kubernetes stamps its version through ldflags; without them binaries report v0.0.0-master.
minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
LDFLAGS="-s -w -X k8s.io/component-base/version.gitVersion=${K8S_VERSION}"
LDFLAGS+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor}"
LDFLAGS+=" -X k8s.io/component-base/version.gitTreeState=clean"

# build <output> <package> [ldflags] [module]: module is a directory under hack/tools with a
# go.mod of its own (default: hack/tools itself, Kubernetes and etcd).
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

# ecosystem <output> <package> [ldflags]: a command of hack/tools/ecosystem, static and with
# one set of build settings for all of them (settings are part of what the build cache
# shares).
ecosystem() {
  CGO_ENABLED=0 GOFLAGS="${GOFLAGS_ECOSYSTEM:-}" build "$1" "$2" "-s -w ${3:-}" ecosystem
}

if ! ${HELM_ONLY}; then
  build "${ETCD_DIR}/etcd" go.etcd.io/etcd/server/v3 "-s -w"
  # etcd's own clients at the same version, as the etcd images ship them: etcdctl for member
  # operations and snapshots, etcdutl for restores and offline checks.
  build "${ETCD_DIR}/etcdctl" go.etcd.io/etcd/etcdctl/v3 "-s -w"
  build "${ETCD_DIR}/etcdutl" go.etcd.io/etcd/etcdutl/v3 "-s -w"
fi
K8S_CMDS=(kube-apiserver kube-controller-manager kube-scheduler)
${WITH_NODE} && K8S_CMDS+=(kubelet kube-proxy)
{ ${RELEASE_ONLY} || ${HELM_ONLY}; } && K8S_CMDS=()
for cmd in "${K8S_CMDS[@]}"; do
  build "${K8S_DIR}/${cmd}" "k8s.io/kubernetes/cmd/${cmd}" "${LDFLAGS}"
done

COREDNS_DIR="${BIN_DIR}/coredns-${COREDNS_VERSION}-${ECOSYSTEM_DIGEST}"
OLM_DIR="${BIN_DIR}/olm-${OLM_VERSION}-${ECOSYSTEM_DIGEST}"
# Keyed by the service discovery Prometheus is built with (see below).
PROMETHEUS_OPERATOR_DIR="${BIN_DIR}/prometheus-operator-${PROMETHEUS_OPERATOR_VERSION}-prometheus-${PROMETHEUS_VERSION}-kubernetes-sd-${ECOSYSTEM_DIGEST}"
CERT_MANAGER_DIR="${BIN_DIR}/cert-manager-${CERT_MANAGER_VERSION}-$(cat "${ECOSYSTEM_DIR}/cert-manager/main.go" "${ECOSYSTEM_DIR}/go.sum" | sha256sum | cut -c1-12)"
METRICS_SERVER_DIR="${BIN_DIR}/metrics-server-${METRICS_SERVER_VERSION}-${ECOSYSTEM_DIGEST}"
KWOK_DIR="${BIN_DIR}/kwok-${KWOK_VERSION}-${ECOSYSTEM_DIGEST}"
HELM_DIR="${BIN_DIR}/helm-${HELM_VERSION}-${ECOSYSTEM_DIGEST}"
# ecosystem_crds <dir> <module> <path in module> [file to drop]: copies a tool's CRDs from
# the module version it is built from.
ecosystem_crds() {
  local dir="$1" module="$2" path="$3" drop="${4:-}"
  [[ -d "${dir}/crds" ]] && return
  local src
  src="$(ecosystem_module_dir "${module}")"
  rm -rf "${dir}/crds.tmp" && cp -r "${src}/${path}" "${dir}/crds.tmp"
  chmod -R u+w "${dir}/crds.tmp"
  [[ -z "${drop}" ]] || rm "${dir}/crds.tmp/${drop}"
  mv "${dir}/crds.tmp" "${dir}/crds"
  echo "copied  ${dir#"${BIN_DIR}/"}/crds"
}
if ${WITH_NODE}; then
  ecosystem "${COREDNS_DIR}/coredns" github.com/coredns/coredns
  # metrics-server serves kubectl top and the HPAs on the real node.
  ecosystem "${METRICS_SERVER_DIR}/metrics-server" sigs.k8s.io/metrics-server/cmd/metrics-server
  # OLM installs the bundle on the real node.
  ecosystem "${OLM_DIR}/olm" github.com/operator-framework/operator-lifecycle-manager/cmd/olm
  ecosystem_crds "${OLM_DIR}" github.com/operator-framework/operator-lifecycle-manager deploy/chart/crds
  # cert-manager issues the cert-manager overlay's certificates on the real node.
  ecosystem "${CERT_MANAGER_DIR}/cert-manager" ./cert-manager
  ecosystem_crds "${CERT_MANAGER_DIR}" github.com/cert-manager/cert-manager deploy/crds README.md
  # The Prometheus Operator turns the prometheus overlay into a Prometheus pod on the real
  # node. Prometheus' module versions v0.3XX.Y are its releases 3.XX.Y; the version
  # stamps are what `prometheus --version` and the operator read. All three are static, for
  # the scratch image hack/images/build.sh makes of the server and the reloader.
  prom_minor="${PROMETHEUS_VERSION#v0.3}"
  prom_release="3.$((10#${prom_minor%%.*})).${prom_minor#*.}"
  ecosystem "${PROMETHEUS_OPERATOR_DIR}/operator" github.com/prometheus-operator/prometheus-operator/cmd/operator \
    "-X github.com/prometheus/common/version.Version=${PROMETHEUS_OPERATOR_VERSION#v}"
  ecosystem "${PROMETHEUS_OPERATOR_DIR}/prometheus-config-reloader" github.com/prometheus-operator/prometheus-operator/cmd/prometheus-config-reloader \
    "-X github.com/prometheus/common/version.Version=${PROMETHEUS_OPERATOR_VERSION#v}"
  # Only the Kubernetes service discovery the operator's configuration uses: Prometheus' build
  # tags leave out the other discoveries and the cloud SDKs they compile in.
  GOFLAGS_ECOSYSTEM=-tags=remove_all_sd,enable_kubernetes_sd ecosystem "${PROMETHEUS_OPERATOR_DIR}/prometheus" github.com/prometheus/prometheus/cmd/prometheus \
    "-X github.com/prometheus/common/version.Version=${prom_release}"
  ecosystem_crds "${PROMETHEUS_OPERATOR_DIR}" github.com/prometheus-operator/prometheus-operator example/prometheus-operator-crd
fi
${RELEASE_ONLY} || ${HELM_ONLY} || ecosystem "${KWOK_DIR}/kwok" sigs.k8s.io/kwok/cmd/kwok
# Helm renders charts/nginx-operator into artifacts/ (make generate), lints it (test/manifests)
# and installs it on the real node.
${RUN_ONLY} || ecosystem "${HELM_DIR}/helm" helm.sh/helm/v3/cmd/helm "-X helm.sh/helm/v3/internal/version.version=${HELM_VERSION}"
# make release signs with cosign (offline, with a key); distribution's registry and crane let
# hack/release-push.sh and the real-node test push a release over TLS on loopback.
COSIGN_VERSION="$(release_version github.com/sigstore/cosign/v2)"
DISTRIBUTION_VERSION="$(release_version github.com/distribution/distribution/v3)"
CRANE_VERSION="$(release_version github.com/google/go-containerregistry)"
COSIGN_DIR="${BIN_DIR}/cosign-${COSIGN_VERSION}-${RELEASE_DIGEST}"
REGISTRY_DIR="${BIN_DIR}/registry-${DISTRIBUTION_VERSION}-${RELEASE_DIGEST}"
CRANE_DIR="${BIN_DIR}/crane-${CRANE_VERSION}-${RELEASE_DIGEST}"
if ${RELEASE_ONLY} || ${WITH_NODE}; then
  CGO_ENABLED=0 build "${COSIGN_DIR}/cosign" github.com/sigstore/cosign/v2/cmd/cosign \
    "-s -w -X sigs.k8s.io/release-utils/version.gitVersion=${COSIGN_VERSION}" release
  CGO_ENABLED=0 build "${REGISTRY_DIR}/registry" github.com/distribution/distribution/v3/cmd/registry \
    "-s -w -X github.com/distribution/distribution/v3/version.version=${DISTRIBUTION_VERSION}" release
  CGO_ENABLED=0 build "${CRANE_DIR}/crane" github.com/google/go-containerregistry/cmd/crane "-s -w" release
fi
# The Stages kwok applies, shipped in its module: nodes turn Ready and then renew their
# Lease and status like kubelet; pods run. Copied whenever one is missing, so a cache
# made with fewer stages is completed.
KWOK_STAGES=(node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease
  pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete)
{ ${RELEASE_ONLY} || ${HELM_ONLY}; } && KWOK_STAGES=()
for stage in "${KWOK_STAGES[@]}"; do
  [[ -f "${KWOK_DIR}/stages/${stage##*/}.yaml" ]] && continue
  src="$(ecosystem_module_dir sigs.k8s.io/kwok)"
  mkdir -p "${KWOK_DIR}/stages"
  cp "${src}/kustomize/stage/${stage}.yaml" "${KWOK_DIR}/stages/${stage##*/}.yaml.tmp"
  chmod u+w "${KWOK_DIR}/stages/${stage##*/}.yaml.tmp"
  mv "${KWOK_DIR}/stages/${stage##*/}.yaml.tmp" "${KWOK_DIR}/stages/${stage##*/}.yaml"
  echo "copied  ${KWOK_DIR#"${BIN_DIR}/"}/stages/${stage##*/}.yaml"
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
HELM_BIN=$([[ -x "${HELM_DIR}/helm" ]] && echo "${HELM_DIR}/helm" || true)
OLM_BIN=${OLM_DIR}/olm
OLM_CRDS_DIR=${OLM_DIR}/crds
CERT_MANAGER_BIN=${CERT_MANAGER_DIR}/cert-manager
CERT_MANAGER_CRDS_DIR=${CERT_MANAGER_DIR}/crds
PROMETHEUS_OPERATOR_BIN=${PROMETHEUS_OPERATOR_DIR}/operator
PROMETHEUS_CONFIG_RELOADER_BIN=${PROMETHEUS_OPERATOR_DIR}/prometheus-config-reloader
PROMETHEUS_BIN=${PROMETHEUS_OPERATOR_DIR}/prometheus
PROMETHEUS_OPERATOR_CRDS_DIR=${PROMETHEUS_OPERATOR_DIR}/crds
COSIGN_BIN=${COSIGN_DIR}/cosign
REGISTRY_BIN=${REGISTRY_DIR}/registry
CRANE_BIN=${CRANE_DIR}/crane
ENV
mv "${BIN_DIR}/env.sh.tmp" "${BIN_DIR}/env.sh"
