#!/usr/bin/env bash
# A kubectl for hack/etcd-replace-member.sh's test: it answers the calls the script makes
# from a three-member etcd cluster kept in $STATE, and cuts the first exec of each kind
# listed in $STATE/cut ("member list" before etcdctl runs, the changes after it ran), the
# way a kubectl exec whose stream is closed fails either way. FAKE_REFUSE_ADD: etcd's
# error for every member add.
set -euo pipefail
members=$STATE/members
# The namespace of every call, for the test of NAMESPACE.
if [[ $1 == -n ]]; then
  echo "$2" >>"$STATE/namespaces"
  shift 2
fi
verb=$1
shift
echo "$verb $*" >>"$STATE/calls"

cut_once() { # cut_once KIND: true the first time KIND is cut
  grep -qxF "$1" "$STATE/cut" 2>/dev/null || return 1
  grep -vxF "$1" "$STATE/cut" >"$STATE/cut.new" || true
  mv "$STATE/cut.new" "$STATE/cut"
  echo "$1" >>"$STATE/was-cut"
  echo "error: closed all streams" >&2
}

case $verb in
  get)
    case $1 in
      pods) printf 'nginx-operator-etcd-0 True\nnginx-operator-etcd-1 True\nnginx-operator-etcd-2 False\n' ;;
      pvc) cat "$STATE/pvc-uid" ;;
    esac ;;
  create) echo "kind: ConfigMap" ;;
  apply) cat >/dev/null ;;
  rollout) ;;
  delete)
    case $1 in
      pvc) echo "uid-new" >"$STATE/pvc-uid" ;;
      # The StatefulSet's new pod joins as the learner that was added.
      pod) sed -i "s|^\([0-9a-f]*\), unstarted, , \(https://$2\.[^,]*\)|\1, started, $2, \2|" "$members" ;;
    esac ;;
  exec)
    while [[ $1 != -- ]]; do shift; done
    shift 2 # -- etcdctl
    while [[ $1 == --* ]]; do shift; done
    kind="$1 $2"
    [[ $kind == "member list" ]] && cut_once "$kind" && exit 1
    case $kind in
      "endpoint health") echo "127.0.0.1:2379 is healthy" ;;
      "member list") cat "$members" ;;
      "member remove")
        grep -q "^$3," "$members" || { echo "Error: etcdserver: member not found" >&2; exit 1; }
        sed -i "/^$3,/d" "$members" ;;
      "member add")
        [[ -n ${FAKE_REFUSE_ADD:-} ]] && { echo "Error: $FAKE_REFUSE_ADD" >&2; exit 1; }
        url=${5#--peer-urls=}
        grep -qF ", $url," "$members" && { echo "Error: etcdserver: Peer URLs already exists" >&2; exit 1; }
        echo "$(printf '%x' $((0xe0 + $(wc -l <"$members")))), unstarted, , $url, , true" >>"$members" ;;
      "member promote")
        grep -q "^$3, .*, true$" "$members" || { echo "Error: etcdserver: can only promote a learner member" >&2; exit 1; }
        sed -i "/^$3,/s/, true$/, false/" "$members" ;;
    esac
    [[ $kind == member\ [rap]* ]] && cut_once "$kind" && exit 1
    exit 0 ;;
esac
