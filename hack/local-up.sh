#!/usr/bin/env bash
# Starts a real local control plane in the background and registers the nginx-operator
# API with it through APIServices, the way a cluster does:
#   etcd, kube-apiserver (RBAC, front proxy), kube-controller-manager, kube-scheduler,
#   kwok with fake nodes, the nginx-operator apiserver (delegated auth, embedded etcd)
#   and the nginx-operator controller (leader election on; START_CONTROLLER=false leaves it out).
# With NODE=real it also runs metrics-server (hack/lib-metrics-server.sh) for kubectl top and HPAs.
# *_EXTRA_FLAGS variables append flags to a component's command line (hack/lib-local.sh).
# With NODE=real (root only) this machine joins as a real node instead of kwok's fake
# nodes (hack/lib-node.sh), and nginx-operator itself is left out: it is deployed onto the
# node from artifacts/deploy (hack/deploy-to-node.sh), as in a real cluster.
# PIDs and logs live under $LOCAL_DIR (default .local/); hack/local-down.sh stops them.
# Returns when the APIServices are Available.
set -Eeuo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib-local.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib-certs.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib-metrics-server.sh"

case "${NODE}" in
  "") ;;
  real) require_root ;;
  *) log "NODE=${NODE} is not known: leave it unset for kwok's fake nodes, or NODE=real" >&2; exit 2 ;;
esac
if up="$(first_running)"; then
  log "the local control plane is already running (${up} is up; state in ${LOCAL_DIR}); run 'make down' first to restart it"
  exit 0
fi
rm -rf "${LOCAL_DIR}"
mkdir -p "${PKI_DIR}" "${LOG_DIR}" "${PID_DIR}"
# A failed start stops what it started, keeping the logs for a look.
trap 'log "start-up failed; stopping what was started (logs stay in ${LOG_DIR})"; KEEP_STATE=1 "${ROOT}/hack/local-down.sh"' ERR

if [[ "${NODE}" == real ]]; then
  "${ROOT}/hack/tools/build.sh" --node >/dev/null
  "${ROOT}/hack/images/build.sh" >/dev/null
  source "${ROOT}/_output/images/images.env"
  # The node starts with every image it will run: no registry is reachable from here.
  NODE_IMAGE_ARCHIVES=("${PAUSE_ARCHIVE}" "${ETCD_ARCHIVE}" "${NGINX_ARCHIVE}" "${NGINX_UNPRIVILEGED_ARCHIVE}" "${NGINX_OPERATOR_ARCHIVE}" "${NGINX_EXPORTER_ARCHIVE}")
else
  "${ROOT}/hack/tools/build.sh" --run >/dev/null
  make -C "${ROOT}" --no-print-directory build >/dev/null
fi
source "${TOOLS_BIN_DIR:-${ROOT}/hack/tools/bin}/env.sh"

# start <name> <command...>: runs a component detached from this shell, recording its PID.
STARTED=()
start() {
  local name="$1"; shift
  setsid "$@" >"${LOG_DIR}/${name}.log" 2>&1 < /dev/null &
  local pid=$!
  echo "${pid}" >"${PID_DIR}/${name}.pid"
  STARTED+=("${name}")
  # Until the forked shell has exec'd the component its command line is this script's,
  # which `ours` does not recognise: on a busy machine `running` then took a component
  # that was starting for one that had exited. Wait for the exec (or the exit).
  for _ in $(seq 1 100); do
    if ours "${pid}" || ! alive "${pid}"; then break; fi
    sleep 0.1
  done
  log "started ${name} (pid ${pid})"
}

# --- certificates -------------------------------------------------------------------
# The CAs and certificates of the stack, in PKI_DIR, valid for ten years (hack/lib-certs.sh).
new_ca() { # new_ca <file> <common name>
  cert_ca "${PKI_DIR}" "$1" "/CN=$2" 3650
}
new_cert() { # new_cert <ca> <file> <subject> <serverAuth|clientAuth> [subjectAltName]
  cert_issue "${PKI_DIR}" "$1" "$2" "$3" 3650 "$4" "${5:-}"
}
new_ca ca kubernetes-ca
new_cert ca kube-apiserver "/CN=kube-apiserver" serverAuth "DNS:localhost,DNS:kubernetes.default.svc,IP:127.0.0.1,IP:${SERVICE_CIDR%.*}.1,IP:${NODE_IP}"
new_cert ca admin "/O=system:masters/CN=kubernetes-admin" clientAuth
new_cert ca nginx-operator-apiserver-client "/CN=system:nginx-operator-apiserver" clientAuth
new_cert ca nginx-operator-controller-client "/CN=system:nginx-operator-controller" clientAuth
# The front proxy has its own CA: our apiserver trusts X-Remote-* headers only from it.
new_ca front-proxy-ca front-proxy-ca
new_cert front-proxy-ca front-proxy-client "/CN=front-proxy-client" clientAuth
openssl genrsa -out "${PKI_DIR}/sa.key" 2048 2>/dev/null
openssl rsa -in "${PKI_DIR}/sa.key" -pubout -out "${PKI_DIR}/sa.pub" 2>/dev/null
# Our apiserver's serving certificate comes from its own CA, published as the APIService caBundle.
new_ca nginx-operator-ca nginx-operator-ca
new_cert nginx-operator-ca nginx-operator-apiserver "/CN=nginx-operator-apiserver.nginx-operator-system.svc" serverAuth \
  "DNS:nginx-operator-apiserver.nginx-operator-system.svc,DNS:localhost,IP:127.0.0.1"
# The controller's metrics serving certificate, from the same CA (tls.crt and tls.key in the
# directory given to --metrics-cert-dir).
mkdir -p "${PKI_DIR}/controller-metrics"
new_cert nginx-operator-ca controller-metrics/tls "/CN=nginx-operator-controller.nginx-operator-system.svc" serverAuth \
  "DNS:nginx-operator-controller.nginx-operator-system.svc,DNS:localhost,IP:127.0.0.1"

write_kubeconfig() { # write_kubeconfig <file> <client cert name>
  local file="$1"
  "${KUBECTL}" --kubeconfig "${file}" config set-cluster local --server "https://127.0.0.1:${KUBE_APISERVER_PORT}" \
    --certificate-authority "${PKI_DIR}/ca.crt" --embed-certs >/dev/null
  "${KUBECTL}" --kubeconfig "${file}" config set-credentials user --client-certificate "${PKI_DIR}/$2.crt" \
    --client-key "${PKI_DIR}/$2.key" --embed-certs >/dev/null
  "${KUBECTL}" --kubeconfig "${file}" config set-context local --cluster local --user user >/dev/null
  "${KUBECTL}" --kubeconfig "${file}" config use-context local >/dev/null
}
write_kubeconfig "${KUBECONFIG_FILE}" admin
write_kubeconfig "${LOCAL_DIR}/nginx-operator-apiserver.kubeconfig" nginx-operator-apiserver-client
write_kubeconfig "${LOCAL_DIR}/nginx-operator-controller.kubeconfig" nginx-operator-controller-client
k() { "${KUBECTL}" --kubeconfig "${KUBECONFIG_FILE}" "$@"; }

# start_kwok_and_nginx_operator: kwok's fake nodes, and our apiserver and controller as
# processes on this machine, registered through artifacts/local.
start_kwok_and_nginx_operator() {
  # The fake nodes renew a Lease in kube-node-lease like kubelet does (and refresh their
  # status now and then); without it kube-controller-manager marks them unreachable, and
  # their pods not ready, one node-monitor grace period after start-up.
  kwok_stages="$(printf '%s,' "${KWOK_STAGES_DIR}"/*.yaml)"
  start kwok "${KWOK_BIN}" --kubeconfig "${KUBECONFIG_FILE}" --config "${kwok_stages%,}" \
    --node-lease-duration-seconds "${NODE_LEASE_DURATION_SECONDS}" \
    --manage-all-nodes=false --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
    --cidr "${FAKE_POD_CIDR}" --node-ip "${FAKE_POD_CIDR%.*}.1" --server-address "127.0.0.1:${KWOK_PORT}"

  # --- registration -------------------------------------------------------------------
  export OPERATOR_APISERVER_PORT
  CA_BUNDLE="$(base64 -w0 "${PKI_DIR}/nginx-operator-ca.crt")"
  export CA_BUNDLE
  wait_for "the default service account namespace" 60 k get namespace default
  for f in "${ROOT}"/artifacts/local/*.yaml; do
    envsubst '${OPERATOR_APISERVER_PORT} ${CA_BUNDLE}' <"${f}" | k apply -f - >/dev/null
  done
  # The roles the local apiserver's and controller's users are bound to, as the base defines them.
  k apply -f "${ROOT}/artifacts/deploy/10-rbac-apiserver.yaml" -f "${ROOT}/artifacts/deploy/50-rbac-controller.yaml" >/dev/null
  # The user roles aggregated into view, edit and admin, as the base installs them.
  k apply -f "${ROOT}/artifacts/deploy/51-rbac-aggregated.yaml" >/dev/null
  # The identity that may read the apiserver's and the controller's /metrics (its token
  # Secret is filled by kube-controller-manager).
  k apply -f "${ROOT}/artifacts/overlays/components/prometheus/metrics-scraper.yaml" >/dev/null
  log "applied artifacts/local, the apiserver's, the controller's and the aggregated user roles from artifacts/deploy and the metrics scraper's identity"

  case "${OPERATOR_APISERVER_STORAGE}" in
    embedded) operator_storage=(--data-dir "${LOCAL_DIR}/nginx-operator-apiserver") ;;
    external) operator_storage=(--etcd-servers "http://127.0.0.1:${ETCD_PORT}" --etcd-prefix /nginx-operator) ;;
    *) log "OPERATOR_APISERVER_STORAGE must be embedded or external, not '${OPERATOR_APISERVER_STORAGE}'" >&2; return 1 ;;
  esac
  start nginx-operator-apiserver "${ROOT}/bin/apiserver" \
    "${operator_storage[@]}" \
    --bind-address 127.0.0.1 --secure-port "${OPERATOR_APISERVER_PORT}" \
    --tls-cert-file "${PKI_DIR}/nginx-operator-apiserver.crt" --tls-private-key-file "${PKI_DIR}/nginx-operator-apiserver.key" \
    --kubeconfig "${LOCAL_DIR}/nginx-operator-apiserver.kubeconfig" \
    --authentication-kubeconfig "${LOCAL_DIR}/nginx-operator-apiserver.kubeconfig" \
    --authorization-kubeconfig "${LOCAL_DIR}/nginx-operator-apiserver.kubeconfig" \
    "${operator_apiserver_extra[@]}"
  wait_running nginx-operator-apiserver "APIService v1alpha2.operator.example.com" 120 \
    k wait --for=condition=Available --timeout=5s apiservice/v1alpha2.operator.example.com apiservice/v1alpha1.operator.example.com
  wait_for "ready fake nodes" 120 k wait --for=condition=Ready --timeout=5s node --all

  if [[ "${START_CONTROLLER}" != true ]]; then
    log "START_CONTROLLER=${START_CONTROLLER}: the controller is not started"
    return 0
  fi
  start nginx-operator-controller "${ROOT}/bin/controller" --kubeconfig "${LOCAL_DIR}/nginx-operator-controller.kubeconfig" \
    ${NGINX_EXPORTER_IMAGE:+--exporter-image "${NGINX_EXPORTER_IMAGE}"} \
    --leader-elect --leader-election-namespace nginx-operator-system \
    --metrics-bind-address "127.0.0.1:${CONTROLLER_METRICS_PORT}" --metrics-cert-dir "${PKI_DIR}/controller-metrics" \
    --health-probe-bind-address "127.0.0.1:${CONTROLLER_PROBE_PORT}" \
    "${controller_extra[@]}"
  wait_running nginx-operator-controller "the controller's /readyz" 60 curl -fsS "http://127.0.0.1:${CONTROLLER_PROBE_PORT}/readyz"
}

# --- control plane ------------------------------------------------------------------
mapfile -t kube_apiserver_extra < <(extra_flags KUBE_APISERVER_EXTRA_FLAGS)
mapfile -t kcm_extra < <(extra_flags KUBE_CONTROLLER_MANAGER_EXTRA_FLAGS)
mapfile -t scheduler_extra < <(extra_flags KUBE_SCHEDULER_EXTRA_FLAGS)
mapfile -t operator_apiserver_extra < <(extra_flags OPERATOR_APISERVER_EXTRA_FLAGS)
mapfile -t controller_extra < <(extra_flags CONTROLLER_EXTRA_FLAGS)
# With a real node, pods reach kube-apiserver on the node address, which the guards
# close to everything but the bridge and loopback; they must be in place first.
apiserver_node_flags=(--bind-address 127.0.0.1 --advertise-address 127.0.0.1)
if [[ "${NODE}" == real ]]; then
  node_network_up
  apiserver_node_flags=(--bind-address 0.0.0.0 --advertise-address "${NODE_IP}"
    --kubelet-client-certificate "${PKI_DIR}/admin.crt" --kubelet-client-key "${PKI_DIR}/admin.key"
    --kubelet-certificate-authority "${PKI_DIR}/ca.crt" --kubelet-preferred-address-types InternalIP)
fi
start etcd "${ETCD_BIN}" --name local --data-dir "${LOCAL_DIR}/etcd" \
  --listen-client-urls "http://127.0.0.1:${ETCD_PORT}" --advertise-client-urls "http://127.0.0.1:${ETCD_PORT}" \
  --listen-peer-urls "http://127.0.0.1:${ETCD_PEER_PORT}" --initial-advertise-peer-urls "http://127.0.0.1:${ETCD_PEER_PORT}" \
  --initial-cluster "local=http://127.0.0.1:${ETCD_PEER_PORT}" --log-level warn
wait_running etcd etcd 60 curl -fsS "http://127.0.0.1:${ETCD_PORT}/health"

# Kubernetes' storage version migrator (docs/storage-migration.md) is beta and off by
# default in 1.36: kube-apiserver serves storagemigration.k8s.io/v1beta1 only with the
# StorageVersionMigrator gate and the group in --runtime-config, and kube-controller-manager's
# storage-version-migrator-controller (part of '*') only starts with the same gate.
svm_gate=(--feature-gates StorageVersionMigrator=true)
start kube-apiserver "${KUBE_BIN_DIR}/kube-apiserver" \
  --etcd-servers "http://127.0.0.1:${ETCD_PORT}" \
  "${svm_gate[@]}" --runtime-config storagemigration.k8s.io/v1beta1=true \
  "${apiserver_node_flags[@]}" --secure-port "${KUBE_APISERVER_PORT}" \
  --tls-cert-file "${PKI_DIR}/kube-apiserver.crt" --tls-private-key-file "${PKI_DIR}/kube-apiserver.key" \
  --client-ca-file "${PKI_DIR}/ca.crt" --authorization-mode Node,RBAC \
  --service-account-issuer https://kubernetes.default.svc --service-account-key-file "${PKI_DIR}/sa.pub" \
  --service-account-signing-key-file "${PKI_DIR}/sa.key" --service-cluster-ip-range "${SERVICE_CIDR}" \
  --requestheader-client-ca-file "${PKI_DIR}/front-proxy-ca.crt" --requestheader-allowed-names front-proxy-client \
  --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
  --requestheader-extra-headers-prefix X-Remote-Extra- \
  --proxy-client-cert-file "${PKI_DIR}/front-proxy-client.crt" --proxy-client-key-file "${PKI_DIR}/front-proxy-client.key" \
  "${kube_apiserver_extra[@]}"
wait_running kube-apiserver kube-apiserver 120 k get --raw /readyz

# Client-side limits well above the defaults (20 QPS for each of kube-controller-manager's
# controllers, 50 for the scheduler): with the defaults the Deployment controller's
# limit made 300 NginxOperators take 71 s to converge, 19 s with these. API Priority and
# Fairness still protects kube-apiserver.
start kube-controller-manager "${KUBE_BIN_DIR}/kube-controller-manager" \
  --kubeconfig "${KUBECONFIG_FILE}" --authentication-kubeconfig "${KUBECONFIG_FILE}" --authorization-kubeconfig "${KUBECONFIG_FILE}" \
  --bind-address 127.0.0.1 --secure-port "${KCM_PORT}" --leader-elect=false \
  --service-account-private-key-file "${PKI_DIR}/sa.key" --root-ca-file "${PKI_DIR}/ca.crt" \
  --use-service-account-credentials --controllers '*' "${svm_gate[@]}" \
  --node-monitor-grace-period "${NODE_MONITOR_GRACE_PERIOD}" \
  --kube-api-qps 500 --kube-api-burst 1000 \
  "${kcm_extra[@]}"
start kube-scheduler "${KUBE_BIN_DIR}/kube-scheduler" \
  --kubeconfig "${KUBECONFIG_FILE}" --authentication-kubeconfig "${KUBECONFIG_FILE}" --authorization-kubeconfig "${KUBECONFIG_FILE}" \
  --bind-address 127.0.0.1 --secure-port "${SCHEDULER_PORT}" --leader-elect=false \
  --kube-api-qps 500 --kube-api-burst 1000 \
  "${scheduler_extra[@]}"
if [[ "${NODE}" == real ]]; then
  wait_for "the default namespace" 60 k get namespace default
  node_up
  metrics_server_up
else
  start_kwok_and_nginx_operator
fi
# kube-controller-manager, kube-scheduler and kwok have nothing waited on above.
for name in "${STARTED[@]}"; do
  if ! running "${name}"; then
    log "${name} is not running; see ${LOG_DIR}/${name}.log:" >&2
    tail -n 5 "${LOG_DIR}/${name}.log" >&2
    false
  fi
done
log "local control plane is up: export KUBECONFIG=${KUBECONFIG_FILE}"
