#!/usr/bin/env bash
# Deploys nginx-operator onto the local cluster's real node (make up NODE=real) the way a
# user deploys it into any cluster: the kustomize base artifacts/deploy applied through an
# overlay (kubectl apply -k), then hack/deploy-certs.sh. The overlay changes two things, both
# because this cluster has no registry and no storage provisioner: the image references point
# at the images hack/images built (already imported into the node's containerd by
# local-up.sh), and it adds hostPath PersistentVolumes on the node for etcd's claims (one per
# member, and the backups'). It also adds the backup component (components/etcd-backup).
# Returns when both APIServices are Available.
#
# Usage: hack/deploy-to-node.sh [operator image reference]
#   The default is the operator image hack/images/build.sh built (_output/images/images.env);
#   a different tag, already imported into the node, rolls the apiserver and the controller to it.
set -Eeuo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib-local.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib-etcd-volumes.sh"
source "${ROOT}/_output/images/images.env"
require_root
k() { "${KUBECTL}" --kubeconfig "${KUBECONFIG_FILE}" "$@"; }
operator_image="${1:-${NGINX_OPERATOR_IMAGE}}"

# An overlay of the base artifacts/deploy that sets the image references and adds the
# PersistentVolumes; kustomize loads a base only through a relative path.
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
# One hostPath PersistentVolume per etcd member, and one for the backups, each bound to its
# claim, as an administrator provisions local volumes (hack/lib-etcd-volumes.sh).
etcd_members="$(sed -n 's/^  replicas: \([0-9]*\)$/\1/p' "${ROOT}/artifacts/deploy/20-etcd.yaml")"
volumes=(etcd-backups.yaml)
backups_pv >"${work}/etcd-backups.yaml"
for ((member = 0; member < etcd_members; member++)); do
  member_pv "${member}" >"${work}/etcd-volume-${member}.yaml"
  volumes+=("etcd-volume-${member}.yaml")
done
cat >"${work}/kustomization.yaml" <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - $(realpath --relative-to="${work}" "${ROOT}/artifacts/deploy")
$(printf '  - %s\n' "${volumes[@]}")
# The whole system, with scheduled backups (a snapshot every 6 hours into the backup volume).
components:
  - $(realpath --relative-to="${work}" "${ROOT}/artifacts/overlays/components/etcd-backup")
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
log "nginx-operator runs on node ${NODE_NAME}: ${etcd_members} etcd members, 2 apiservers and 2 controllers; APIServices Available"
