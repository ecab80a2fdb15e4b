#!/usr/bin/env bash
# What hack/etcd-replace-member.sh and hack/etcd-restore.sh share (sourced, not run): the
# names of nginx-operator's etcd objects, kubectl in its namespace, and waiting.
# NAMESPACE: where nginx-operator runs (default nginx-operator-system; a Helm release may be
# elsewhere), as hack/deploy-certs.sh reads it.
NAMESPACE=${NAMESPACE:-nginx-operator-system}
STATEFULSET=nginx-operator-etcd
KUBECTL=${KUBECTL:-kubectl}
TIMEOUT=${TIMEOUT:-600}

k() { "$KUBECTL" -n "$NAMESPACE" "$@"; }
log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*"; }

# until_ok WHAT COMMAND...: retries COMMAND every 2 seconds for TIMEOUT seconds.
until_ok() {
  local what=$1 deadline=$((SECONDS + TIMEOUT))
  shift
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      echo "timed out after ${TIMEOUT}s waiting for ${what}" >&2
      return 1
    fi
    sleep 2
  done
}
