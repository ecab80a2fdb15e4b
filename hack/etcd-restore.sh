#!/usr/bin/env bash
# Restores nginx-operator's etcd from a snapshot of the backup volume (components/etcd-backup)
# into a fresh cluster, as Kubernetes' own guidance restores the cluster's etcd:
#   1. stops every writer: the apiserver Deployment is scaled to 0, then the etcd StatefulSet,
#   2. deletes every member's PersistentVolumeClaim (their data is replaced, not merged) and
#      makes each claim again, empty, with the StatefulSet's claim template,
#   3. restores the snapshot into every member's new volume (one Job, a container per
#      member running etcdutl from the StatefulSet's etcd image), with the revision bumped
#      past anything a client may have seen and marked compacted, so watchers and caches
#      relist instead of missing changes,
#   4. starts the members and waits for the cluster, then the apiservers (as many as before),
#   5. restarts the controller, so it reconciles from the restored objects, not from its cache.
# Objects come back with their uid, spec and status; whatever was created after the snapshot
# is gone, and the garbage collector deletes the Deployments and Services it owned.
# Needs kubectl on the cluster of $KUBECONFIG. docs/operations.md, "Restoring a backup".
#
# Usage: hack/etcd-restore.sh SNAPSHOT   a file name in the backup volume, e.g.
#                                         nginx-operator-etcd-20261124T061700Z.db
#   BACKUP_CLAIM  the claim holding the snapshots (default nginx-operator-etcd-backups)
#   NAMESPACE     where nginx-operator runs (default nginx-operator-system)
#   KUBECTL       kubectl binary (default: kubectl)
#   TIMEOUT       seconds to wait for each step (default 600)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib-etcd-admin.sh"
APISERVER=nginx-operator-apiserver
CONTROLLER=nginx-operator-controller
BACKUP_CLAIM=${BACKUP_CLAIM:-nginx-operator-etcd-backups}
# Far past any revision a client saw: etcd's guidance for restores under Kubernetes.
REVISION_BUMP=1000000000

case ${1:-} in
  -h | --help) awk 'NR == 1 { next } !/^#/ { exit } { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
  '' | */* | -*) echo "usage: $0 SNAPSHOT (a file name in the claim ${BACKUP_CLAIM})" >&2; exit 2 ;;
esac
snapshot=$1

sts() { k get statefulset "$STATEFULSET" -o jsonpath="$1"; }
no_pods() { [[ -z $(k get pods -l "app.kubernetes.io/name=$1" -o name) ]]; }

# What the restore needs from the StatefulSet as deployed (an overlay may have changed it).
members=$(sts '{.spec.replicas}')
image=$(sts '{.spec.template.spec.containers[0].image}')
initial_cluster=$(sts '{range .spec.template.spec.containers[0].command[*]}{@}{"\n"}{end}' | sed -n 's/^--initial-cluster=//p')
token=$(sts '{range .spec.template.spec.containers[0].command[*]}{@}{"\n"}{end}' | sed -n 's/^--initial-cluster-token=//p')
claim_spec=$(sts '{.spec.volumeClaimTemplates[0].spec}')
[[ -n $members && -n $image && -n $initial_cluster && -n $token ]] ||
  { echo "cannot read the members, image, --initial-cluster and --initial-cluster-token of statefulset/${STATEFULSET}" >&2; exit 1; }
k get pvc "$BACKUP_CLAIM" >/dev/null
apiservers=$(k get deployment "$APISERVER" -o jsonpath='{.spec.replicas}')
log "restoring ${snapshot} into ${members} members (${image}); ${apiservers} apiservers to restart"

# 1. No writer may see the old data again, nor write into the cluster being replaced.
k scale deployment "$APISERVER" --replicas=0 >/dev/null
until_ok "the apiserver pods to stop" no_pods "$APISERVER"
k scale statefulset "$STATEFULSET" --replicas=0 >/dev/null
until_ok "the etcd pods to stop" no_pods "$STATEFULSET"
log "stopped the apiservers and etcd"

# 2. Every member's claim, deleted and made again empty.
claims=() containers="" volumes=""
for ((i = 0; i < members; i++)); do claims+=("data-${STATEFULSET}-$i"); done
k delete pvc "${claims[@]}" --ignore-not-found --wait=true --timeout="${TIMEOUT}s" >/dev/null
for ((i = 0; i < members; i++)); do
  member=${STATEFULSET}-$i claim=${claims[$i]}
  k apply -f - >/dev/null <<YAML
{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
 "metadata": {"name": "${claim}", "namespace": "${NAMESPACE}",
              "labels": {"app.kubernetes.io/name": "${STATEFULSET}", "app.kubernetes.io/part-of": "nginx-operator"}},
 "spec": ${claim_spec}}
YAML
  containers+="${containers:+,}"'{"name": "'"restore-$i"'", "image": "'"${image}"'",
       "command": ["etcdutl", "snapshot", "restore", "/var/lib/etcd-backups/'"${snapshot}"'",
         "--name='"${member}"'", "--initial-cluster='"${initial_cluster}"'", "--initial-cluster-token='"${token}"'",
         "--initial-advertise-peer-urls=https://'"${member}.${STATEFULSET}.${NAMESPACE}"'.svc:2380",
         "--data-dir=/var/lib/etcd/data", "--bump-revision='"${REVISION_BUMP}"'", "--mark-compacted"],
       "securityContext": {"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true, "capabilities": {"drop": ["ALL"]}},
       "volumeMounts": [{"name": "'"data-$i"'", "mountPath": "/var/lib/etcd"},
                        {"name": "backups", "mountPath": "/var/lib/etcd-backups", "readOnly": true}]}'
  volumes+="${volumes:+,}"'{"name": "'"data-$i"'", "persistentVolumeClaim": {"claimName": "'"${claim}"'"}}'
done

# 3. One Pod restores every member side by side, a container each: the backup claim may be
# ReadWriteOnce, and one Pod mounts it once.
job=${STATEFULSET}-restore
k delete job "$job" --ignore-not-found --wait=true >/dev/null
k apply -f - >/dev/null <<YAML
{"apiVersion": "batch/v1", "kind": "Job",
 "metadata": {"name": "${job}", "namespace": "${NAMESPACE}", "labels": {"app.kubernetes.io/part-of": "nginx-operator"}},
 "spec": {"backoffLimit": 0, "activeDeadlineSeconds": ${TIMEOUT}, "template": {
   "metadata": {"labels": {"app.kubernetes.io/name": "nginx-operator-etcd-restore", "app.kubernetes.io/part-of": "nginx-operator"}},
   "spec": {"restartPolicy": "Never", "automountServiceAccountToken": false, "enableServiceLinks": false,
     "securityContext": {"runAsNonRoot": true, "runAsUser": 65532, "runAsGroup": 65532, "fsGroup": 65532, "seccompProfile": {"type": "RuntimeDefault"}},
     "containers": [${containers}],
     "volumes": [${volumes},
                 {"name": "backups", "persistentVolumeClaim": {"claimName": "${BACKUP_CLAIM}", "readOnly": true}}]}}}}
YAML
# Complete or Failed: a failed restore is reported at once, not after TIMEOUT.
job_done() { k get job "$job" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{"\n"}{end}' | grep -qEx 'Complete|Failed'; }
until_ok "the restore Job ${job}" job_done || true
if [[ $(k get job "$job" -o jsonpath='{.status.conditions[?(@.type=="Complete")].status}') != True ]]; then
  k logs "job/${job}" --all-containers --prefix >&2 || true
  echo "restoring the members failed; the Job ${job} is left for inspection" >&2
  exit 1
fi
k delete job "$job" --wait=false >/dev/null
log "restored ${snapshot} into ${claims[*]}"

# 4. The members start on the restored data; the apiservers after them.
k scale statefulset "$STATEFULSET" --replicas="$members" >/dev/null
k rollout status statefulset/"$STATEFULSET" --timeout="${TIMEOUT}s" >/dev/null
log "etcd runs ${members} members on the restored data"
k scale deployment "$APISERVER" --replicas="$apiservers" >/dev/null
k rollout status deployment/"$APISERVER" --timeout="${TIMEOUT}s" >/dev/null
log "${apiservers} apiservers ready"

# 5. Reconcile from the restored objects.
k rollout restart deployment/"$CONTROLLER" >/dev/null
k rollout status deployment/"$CONTROLLER" --timeout="${TIMEOUT}s" >/dev/null
log "controller restarted; restore of ${snapshot} complete"
