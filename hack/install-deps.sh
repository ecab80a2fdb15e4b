#!/usr/bin/env bash
# The one list of Debian packages the build and the tests need, with what needs each. As
# root, installs the missing ones (used by .ci/run and `make test`); as another user,
# installs nothing and names what is missing and what will be skipped without it.
#   hack/install-deps.sh          install (root) or report (non-root)
#   hack/install-deps.sh --check  report only; exit 1 when something is missing
set -euo pipefail

# package|command or file that shows it is installed|root only|who needs it
DEPS=(
  "openssl|openssl|no|the local control plane's certificates (make run, test/e2e)"
  "gettext-base|envsubst|no|the local control plane's manifests"
  "curl|curl|no|hack/local-up.sh's health checks"
  "protobuf-compiler|protoc|no|make generate, make verify (go-to-protobuf)"
  "prometheus|promtool|no|the alert-rule tests (test/manifests) and Prometheus in test/e2e"
  "graphviz|dot|no|docs/request-path.svg (make generate, make verify)"
  "containerd|containerd|yes|the real node (test/deploy, make run NODE=real)"
  "runc|runc|yes|the real node"
  "containernetworking-plugins|/usr/lib/cni/bridge|yes|the real node's pod network"
  "iptables|iptables|yes|the real node's guards and kube-proxy"
  "conntrack|conntrack|yes|kube-proxy on the real node"
  "buildah|buildah|yes|make images (the real node runs them; hack/images tests)"
  "skopeo|skopeo|yes|the copy of the multi-arch image index README shows (hack/images tests)"
)

check_only=false
[[ "${1:-}" == "--check" ]] && check_only=true
root=false
[[ "$(id -u)" == 0 ]] && root=true

present() { if [[ "$1" == /* ]]; then [[ -e "$1" ]]; else command -v "$1" >/dev/null; fi; }

missing=() without=()
for dep in "${DEPS[@]}"; do
  IFS='|' read -r pkg probe root_only why <<<"${dep}"
  present "${probe}" && continue
  # Not root: the suites that need these packages need root too, and skip anyway.
  [[ "${root_only}" == yes && "${root}" == false ]] && continue
  missing+=("${pkg}") && without+=("${pkg}: ${why}")
done
test -x /usr/bin/kubectl || { echo "/usr/bin/kubectl is required (the tests drive the cluster with it)" >&2; exit 1; }
${root} || echo "not root: the real-node suite (test/deploy) and the image tests (hack/images) will skip; they need root"

# The nginx image is assembled from Debian's packages (hack/images), which needs the package lists.
need_lists=false
${root} && ! apt-cache show nginx >/dev/null 2>&1 && need_lists=true

((${#missing[@]} == 0)) && ! ${need_lists} && exit 0
if ${check_only} || ! ${root}; then
  if ((${#missing[@]})); then
    echo "missing Debian packages (as root: apt-get install -y ${missing[*]}); without them these skip or fail:"
    printf '  %s\n' "${without[@]}"
  fi
  ${check_only} && exit 1
  exit 0
fi
echo "--- apt: updating the package lists${missing[*]:+, installing ${missing[*]}}"
apt-get update -qq
((${#missing[@]} == 0)) || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
echo "--- apt: done"
