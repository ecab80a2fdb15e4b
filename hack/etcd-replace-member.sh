#!/usr/bin/env bash
# Replaces a member of nginx-operator's etcd whose data is lost (its volume gone, wiped or
# corrupt) while the other members keep the quorum (2 of 3 running):
#   1. removes the member from the cluster (a pod of it that came back on an empty volume
#      is then refused by its peers and stops),
#   2. adds it back under the same name and peer URL as a learner (it does not count for the
#      quorum until it has caught up),
#   3. deletes its PersistentVolumeClaim and its pod: the StatefulSet starts it again on a
#      new, empty volume (from the cluster's storage class, or one an administrator made
#      for the claim), from which it joins the running cluster and receives the data,
#   4. promotes it to a voting member once it is in sync, and checks every member's health.
# Needs kubectl on the cluster of $KUBECONFIG (exec in the etcd pods); etcdctl runs inside a
# healthy member's pod. Each change is checked in the member list and tried again if it is
# not there, so an exec cut mid-way does not stop the script, and running the script again
# after a failure is safe. docs/operations.md, "Replacing an etcd member".
#
# Usage: hack/etcd-replace-member.sh ORDINAL      e.g. 2 for the pod nginx-operator-etcd-2
#   NAMESPACE where nginx-operator runs (default nginx-operator-system)
#   KUBECTL   kubectl binary (default: kubectl)
#   TIMEOUT   seconds to wait for each step (default 600)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib-etcd-admin.sh"
# Read by the member containers as ETCD_INITIAL_CLUSTER_STATE (artifacts/deploy/20-etcd.yaml).
BOOTSTRAP_CONFIGMAP=nginx-operator-etcd-bootstrap

case ${1:-} in
  -h | --help) awk 'NR == 1 { next } !/^#/ { exit } { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
  '' | *[!0-9]*) echo "usage: $0 ORDINAL (the member's pod is ${STATEFULSET}-ORDINAL)" >&2; exit 2 ;;
esac
target=${STATEFULSET}-$1
peer_url=https://${target}.${STATEFULSET}.${NAMESPACE}.svc:2380

# etcdctl POD ARGS...: etcdctl in a member's pod, with the member's peer certificate (a
# client certificate of the etcd CA, as etcd requires of every client).
etcdctl() {
  local pod=$1
  shift
  k exec "$pod" -c etcd -- etcdctl --endpoints=https://127.0.0.1:2379 --command-timeout=15s \
    --cacert=/etc/etcd/tls/peer/ca.crt --cert=/etc/etcd/tls/peer/tls.crt --key=/etc/etcd/tls/peer/tls.key "$@"
}
# A kubectl exec whose stream is cut (a loaded or restarting API server, a dropped
# connection) fails whether or not etcdctl ran. So reads are tried again, and each change
# is made until a read shows it, never judged by its own exit status.
ATTEMPTS=5
# read_etcd ARGS...: a read-only etcdctl in the helper pod, tried again when it fails;
# prints the output of the run that succeeded.
read_etcd() {
  local out attempt
  for ((attempt = 1; attempt <= ATTEMPTS; attempt++)); do
    out=$(etcdctl "$helper" "$@") && { printf '%s\n' "$out"; return 0; }
    sleep 2
  done
  return 1
}
# until_seen WHAT CHECK CHANGE...: runs CHANGE until CHECK holds, ATTEMPTS times at most.
until_seen() {
  local what=$1 check=$2 attempt
  shift 2
  for ((attempt = 1; attempt <= ATTEMPTS; attempt++)); do
    "$check" && return 0
    "$@" >/dev/null || sleep 2
  done
  "$check" || { echo "${what}: not done after ${ATTEMPTS} attempts" >&2; return 1; }
}
# member_line: the target's line of `etcdctl member list` (ID, status, name, peer URLs,
# client URLs, is learner), found by its peer URL: an added member has no name until it
# starts. Fails when the list cannot be read, which is not the same as an empty line.
member_line() {
  local list
  list=$(read_etcd member list) || return 1
  awk -F', ' -v url="$peer_url" '$4 == url' <<<"$list"
}
listed() { local line; line=$(member_line) && [[ -n $line ]]; }
unlisted() { local line; line=$(member_line) && [[ -z $line ]]; }
remove_target() { local line; line=$(member_line) && [[ -n $line ]] && etcdctl "$helper" member remove "${line%%,*}"; }
# member_field N: field N of the target's line, without spaces.
member_field() { member_line | cut -d, -f"$1" | tr -d ' '; }
voting() { [[ $(member_field 6) == false ]]; }

# A Ready member other than the target runs etcdctl.
helper=$(k get pods -l app.kubernetes.io/name=${STATEFULSET} \
  -o jsonpath='{range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' |
  awk -v target="$target" '$1 != target && $2 == "True" { print $1; exit }')
[[ -n $helper ]] || { echo "no Ready etcd member besides ${target}: without a quorum, restore from a backup (docs/operations.md)" >&2; exit 1; }
log "running etcdctl in ${helper}"
read_etcd endpoint health >/dev/null || { echo "${helper} reports etcd unhealthy: is the quorum there?" >&2; exit 1; }

line=$(member_line) || { echo "cannot read the member list in ${helper}" >&2; exit 1; }
if [[ -n $line ]]; then
  until_seen "removing ${target} from the cluster" unlisted remove_target
  log "removed member ${line%%,*} (${target})"
fi
# A member that starts on an empty volume must join the running cluster, not found a new one.
k create configmap "$BOOTSTRAP_CONFIGMAP" --from-literal=initial-cluster-state=existing --dry-run=client -o yaml | k apply -f - >/dev/null
until_seen "adding ${target} as a learner" listed etcdctl "$helper" member add "$target" --learner --peer-urls="$peer_url"
line=$(member_line) || { echo "cannot read the member list in ${helper}" >&2; exit 1; }
id=${line%%,*}
log "added ${target} as learner ${id}"

claim=data-${target}
old_claim=$(k get pvc "$claim" --ignore-not-found -o jsonpath='{.metadata.uid}')
k delete pvc "$claim" --ignore-not-found --wait=false >/dev/null
k delete pod "$target" --ignore-not-found --wait=false >/dev/null
log "deleted the claim ${claim} and the pod ${target}; the StatefulSet makes both again"
new_claim() { [[ $(k get pvc "$claim" -o jsonpath='{.metadata.uid}') != "${old_claim}" ]]; }
until_ok "a new claim ${claim}" new_claim
log "new claim ${claim}; waiting for its volume and for ${target} to join"

started() { [[ $(member_field 2) == started ]]; }
until_ok "${target} to start and join as a learner" started
# A promotion whose answer was lost leaves a voting member, which etcd refuses to promote.
promote() { voting || etcdctl "$helper" member promote "$id"; }
until_ok "${target} to be promoted (it must first catch up with the leader)" promote
log "promoted ${target} to a voting member"
k delete configmap "$BOOTSTRAP_CONFIGMAP" --ignore-not-found >/dev/null
until_ok "every member healthy" etcdctl "$helper" endpoint health --cluster
k rollout status statefulset/"$STATEFULSET" --timeout="${TIMEOUT}s" >/dev/null
read_etcd member list -w table
log "${target} replaced"
