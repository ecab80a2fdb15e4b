# metrics-server next to the real node (sourced by local-up.sh, not run): a process on
# this machine, registered through artifacts/local/metrics-server as the APIService
# v1beta1.metrics.k8s.io, so `kubectl top` and HorizontalPodAutoscalers on CPU work.
# It scrapes the kubelet's /metrics/resource with a client certificate of its own and
# checks the kubelet's serving certificate against the cluster CA.

# metrics_server_up: after node_up; returns when the APIService is Available.
metrics_server_up() {
  new_ca metrics-server-ca metrics-server-ca
  new_cert metrics-server-ca metrics-server "/CN=metrics-server.kube-system.svc" serverAuth \
    "DNS:metrics-server.kube-system.svc,DNS:localhost,IP:127.0.0.1"
  new_cert ca metrics-server-client "/CN=system:metrics-server" clientAuth
  write_kubeconfig "${LOCAL_DIR}/metrics-server.kubeconfig" metrics-server-client
  METRICS_SERVER_CA_BUNDLE="$(base64 -w0 "${PKI_DIR}/metrics-server-ca.crt")"
  export METRICS_SERVER_PORT METRICS_SERVER_CA_BUNDLE
  local f
  for f in "${ROOT}"/artifacts/local/metrics-server/*.yaml; do
    envsubst '${METRICS_SERVER_PORT} ${METRICS_SERVER_CA_BUNDLE}' <"${f}" | k apply -f - >/dev/null
  done
  # A scrape every 15s, as metrics-server's own manifests do (the default is a minute): CPU
  # figures are rates over the scrape interval, and an HPA reads them every 15s.
  start metrics-server "${METRICS_SERVER_BIN}" \
    --bind-address 127.0.0.1 --secure-port "${METRICS_SERVER_PORT}" \
    --tls-cert-file "${PKI_DIR}/metrics-server.crt" --tls-private-key-file "${PKI_DIR}/metrics-server.key" \
    --kubeconfig "${LOCAL_DIR}/metrics-server.kubeconfig" \
    --authentication-kubeconfig "${LOCAL_DIR}/metrics-server.kubeconfig" \
    --authorization-kubeconfig "${LOCAL_DIR}/metrics-server.kubeconfig" \
    --kubelet-preferred-address-types InternalIP --kubelet-use-node-status-port \
    --kubelet-certificate-authority "${PKI_DIR}/ca.crt" \
    --kubelet-client-certificate "${PKI_DIR}/metrics-server-client.crt" \
    --kubelet-client-key "${PKI_DIR}/metrics-server-client.key" \
    --metric-resolution 15s
  wait_running metrics-server "APIService v1beta1.metrics.k8s.io" 120 \
    k wait --for=condition=Available --timeout=5s apiservice/v1beta1.metrics.k8s.io
}
