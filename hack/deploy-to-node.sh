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
# Usage: hack/deploy-to-node.sh [--artifacts DIR] [--component DIR]... [operator image reference]
#   The default image is the operator image hack/images/build.sh built (_output/images/images.env);
#   a different tag, already imported into the node, rolls the apiserver and the controller to it.
#   The nginx pods' exporter image is always the one built (a base without it ignores it).
#   --artifacts DIR  another release's artifacts/ (its deploy base and etcd-backup component),
#                    as the upgrade tests install the previous release
#   --component DIR  a further kustomize component, e.g. artifacts/overlays/components/upgrade-window
set -Eeuo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib-local.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib-etcd-volumes.sh"
source "${ROOT}/_output/images/images.env"
require_root
k() { "${KUBECTL}" --kubeconfig "${KUBECONFIG_FILE}" "$@"; }
artifacts="${ROOT}/artifacts"
components=()
while [[ $# -gt 0 && $1 == --* ]]; do
  case $1 in
    --artifacts) artifacts="$(realpath "$2")"; shift 2 ;;
    --component) components+=("$(realpath "$2")"); shift 2 ;;
    *) echo "unknown flag $1" >&2; exit 2 ;;
  esac
done
components=("${artifacts}/overlays/components/etcd-backup" ${components[@]+"${components[@]}"})
operator_image="${1:-${NGINX_OPERATOR_IMAGE}}"

# An overlay of the base artifacts/deploy that sets the image references and adds the
# PersistentVolumes; kustomize loads a base only through a relative path.
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
# One hostPath PersistentVolume per etcd member, and one for the backups, each bound to its
# claim, as an administrator provisions local volumes (hack/lib-etcd-volumes.sh).
etcd_members="$(sed -n 's/^  replicas: \([0-9]*\)$/\1/p' "${artifacts}/deploy/20-etcd.yaml")"
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
  - $(realpath --relative-to="${work}" "${artifacts}/deploy")
$(printf '  - %s\n' "${volumes[@]}")
# The whole system, with scheduled backups (a snapshot every 6 hours into the backup volume).
components:
$(for c in "${components[@]}"; do printf '  - %s\n' "$(realpath --relative-to="${work}" "${c}")"; done)
images:
  - {name: example.com/nginx-operator, newName: ${operator_image%:*}, newTag: ${operator_image##*:}}
  - {name: example.com/nginx-operator/nginx-exporter, newName: ${NGINX_EXPORTER_IMAGE%:*}, newTag: ${NGINX_EXPORTER_IMAGE##*:}}
  - {name: registry.k8s.io/etcd, newName: ${ETCD_IMAGE%:*}, newTag: ${ETCD_IMAGE##*:}}
YAML
k apply -k "${work}" >/dev/null
log "applied ${artifacts}/deploy with ${operator_image}, ${NGINX_EXPORTER_IMAGE} and ${ETCD_IMAGE}, components: $(basename -a "${components[@]}" | paste -sd' ')"

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
