#!/usr/bin/env bash
# `make run`: brings the local control plane up, applies the samples, and keeps it in the
# foreground until Ctrl-C, which stops everything it started.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib-local.sh"

if up="$(first_running)"; then
  log "a local control plane started by 'make up' is running (${up} is up); run 'make down' first"
  exit 1
fi
idle_pid=""
trap '[[ -n "${idle_pid}" ]] && kill "${idle_pid}" 2>/dev/null; "${ROOT}/hack/local-down.sh"' EXIT
trap 'exit 130' INT TERM

"${ROOT}/hack/local-up.sh"
k() { "${KUBECTL}" --kubeconfig "${KUBECONFIG_FILE}" "$@"; }
if [[ "${NODE}" == real ]]; then
  "${ROOT}/hack/deploy-to-node.sh"
fi
# The v1alpha1 sample draws a deprecation warning; that is expected, so keep it quiet.
k apply -f "${ROOT}/artifacts/samples/" 2> >(grep -v '^Warning: ' >&2)
if [[ "${NODE}" == real ]]; then
  # No registry is reachable: the node has the nginx images built from Debian's packages
  # under the names the samples and the defaults use (hack/lib-node.sh).
  if ! k wait --for=condition=Available --timeout=180s ngx --all >/dev/null; then
    log "not every sample became Available within 3 minutes; see kubectl get ngx,pods -o wide" >&2
  fi
  cat <<MSG

nginx-operator runs as pods on node ${NODE_NAME} (kubectl get pods -n nginx-operator-system),
and so do the samples' nginx pods. Try:

  export KUBECONFIG=${KUBECONFIG_FILE}
  kubectl get ngx,deployments,services,pods -o wide
  curl http://\$(kubectl get svc web -o jsonpath='{.spec.clusterIP}')/      # the Service
  curl http://${NODE_IP}:30080/                                            # its NodePort
MSG
fi
cat <<MSG

The nginx-operator API is served through kube-apiserver at https://127.0.0.1:${KUBE_APISERVER_PORT}.
Try, in another terminal:

  export KUBECONFIG=${KUBECONFIG_FILE}
  kubectl get nginxoperators -A
  kubectl get ngx -o wide
  kubectl explain nginxoperators.spec
  kubectl scale ngx web --replicas=5
  kubectl get deployments,services,pods

Logs: ${LOG_DIR}. Press Ctrl-C to stop everything.
MSG
sleep infinity &
idle_pid=$!
wait "${idle_pid}"
