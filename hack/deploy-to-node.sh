#!/usr/bin/env bash
# Deploys nginx-operator onto the local cluster's real node (make up NODE=real) the way a
# user deploys it into any cluster: the kustomize base artifacts/deploy applied through an
# overlay (kubectl apply -k), then hack/deploy-certs.sh. The overlay changes two things, both
# because this cluster has no registry and no storage provisioner: the image references point
# at the images hack/images built (already imported into the node's containerd by
# local-up.sh), and it adds a hostPath PersistentVolume on the node for etcd's claim.
# Returns when both APIServices are Available.
#
# Usage: hack/deploy-to-node.sh [operator image reference]
#   The default is the operator image hack/images/build.sh built (_output/images/images.env);
#   a different tag, already imported into the node, rolls the apiserver and the controller to it.
set -Eeuo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib-local.sh"
source "${ROOT}/_output/images/images.env"
require_root
k() { "${KUBECTL}" --kubeconfig "${KUBECONFIG_FILE}" "$@"; }
operator_image="${1:-${NGINX_OPERATOR_IMAGE}}"

# etcd runs as 65532 and kubelet does not chown hostPath volumes, so the directory is
# prepared here, as an administrator prepares a local volume.
volume="${NODE_DIR}/volumes/nginx-operator-etcd-0"
mkdir -p "${volume}" && chown 65532:65532 "${volume}" && chmod 0700 "${volume}"
# An overlay of the base artifacts/deploy that sets the image references and adds the
# PersistentVolume; kustomize loads a base only through a relative path.
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
cat >"${work}/etcd-volume.yaml" <<YAML
apiVersion: v1
kind: PersistentVolume
metadata:
  name: nginx-operator-etcd-0
  labels:
    app.kubernetes.io/part-of: nginx-operator
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  claimRef: {namespace: nginx-operator-system, name: data-nginx-operator-etcd-0}
  hostPath: {path: ${volume}, type: Directory}
YAML
cat >"${work}/kustomization.yaml" <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - $(realpath --relative-to="${work}" "${ROOT}/artifacts/deploy")
  - etcd-volume.yaml
images:
  - {name: example.com/nginx-operator, newName: ${operator_image%:*}, newTag: ${operator_image##*:}}
  - {name: registry.k8s.io/etcd, newName: ${ETCD_IMAGE%:*}, newTag: ${ETCD_IMAGE##*:}}
YAML
k apply -k "${work}" >/dev/null
log "applied artifacts/deploy with ${operator_image} and ${ETCD_IMAGE}"

# openssl talks on stderr even when all is well; show it only when the script fails.
if ! out="$(KUBECONFIG="${KUBECONFIG_FILE}" KUBECTL="${KUBECTL}" OUT_DIR="${NODE_DIR}/deploy-certs" "${ROOT}/hack/deploy-certs.sh" 2>&1)"; then
  printf '%s\n' "${out}" >&2
  exit 1
fi
log "created the serving certificate and set the APIServices' caBundle"

k -n nginx-operator-system rollout status statefulset/nginx-operator-etcd --timeout 180s >/dev/null
k -n nginx-operator-system rollout status deployment/nginx-operator-apiserver --timeout 180s >/dev/null
k -n nginx-operator-system rollout status deployment/nginx-operator-controller --timeout 180s >/dev/null
wait_for "APIServices Available" 180 \
  k wait --for=condition=Available --timeout=5s apiservice/v1alpha2.operator.example.com apiservice/v1alpha1.operator.example.com
log "nginx-operator runs on node ${NODE_NAME}: etcd, 2 apiservers and 2 controllers; APIServices Available"
