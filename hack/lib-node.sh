# Settings of the optional real node (sourced after lib-local.sh, not run).
# The node is this machine: kubelet, kube-proxy, containerd and CoreDNS run on the host,
# pods get addresses on a bridge of their own. Every address below exists only here.
NODE_DIR="${LOCAL_DIR}/node"
NODE_NAME="${NODE_NAME:-real-node}"
NODE_BRIDGE="${NODE_BRIDGE:-ngxop0}"
# The pod network and the node's address on it (the bridge's gateway address).
POD_CIDR="${POD_CIDR:-10.88.0.0/16}"
NODE_IP="${NODE_IP:-10.88.0.1}"
# kube-apiserver's --service-cluster-ip-range and kwok's --cidr in local-up.sh; the
# guards below cover both. Sized for thousands of NginxOperators (a Service each, a pod
# per replica): a /16 holds 65534 Services (kube-apiserver accepts up to a /12) and as
# many fake pod addresses. Neither overlaps the other nor POD_CIDR.
SERVICE_CIDR="${SERVICE_CIDR:-10.96.0.0/16}"
FAKE_POD_CIDR="${FAKE_POD_CIDR:-10.244.0.0/16}"
CONTAINERD_SOCK="${NODE_DIR}/containerd/containerd.sock"
# Its ports (KUBELET_HEALTHZ_PORT, KUBE_PROXY_*_PORT) are in hack/stack.txt.
# The iptables chain holding the traffic guards, in the filter table.
GUARD_CHAIN="NGINX-OPERATOR-GUARD"
# Chains kubelet creates for itself; kube-proxy --cleanup removes kube-proxy's own.
KUBELET_CHAINS=(KUBE-FIREWALL KUBE-KUBELET-CANARY KUBE-IPTABLES-HINT)
# Paths kubelet, containerd and the CNI plugins insist on, outside NODE_DIR; what this
# node adds there is removed on teardown, what was there before stays.
NODE_FIXED_DIRS=(/var/log/containers /var/log/pods /var/lib/kubelet /var/lib/cni /run/netns /run/containerd /opt/containerd)
# Names the LOCAL_DIR of the stack whose real node holds the host's shared names, so a
# later stack can tell who holds them, and whether that stack is still alive.
NODE_OWNER_FILE="${NODE_OWNER_FILE:-/run/nginx-operator-real-node}"

require_root() {
  if [[ "$(id -u)" != 0 ]]; then
    log "NODE=real needs root: it runs kubelet, containerd and kube-proxy, creates a bridge and installs iptables rules. Run it as root, or leave NODE unset for the kwok nodes, which need no root." >&2
    exit 1
  fi
}

# new_entries <dir>: entries of a fixed directory that were not there before the node
# started (the list recorded by node-up.sh), one path a line.
new_entries() {
  local dir="$1" before="${NODE_DIR}/before${1//\//_}"
  [[ -d "${dir}" ]] || return 0
  if [[ ! -f "${before}" ]]; then
    return 0
  fi
  if [[ "$(head -n 1 "${before}")" == "<absent>" ]]; then
    echo "${dir}"
    return 0
  fi
  comm -13 "${before}" <(ls -A "${dir}" | sort) | sed "s|^|${dir}/|"
}

# save_state <name> <value>: remembers a host setting to restore on teardown.
save_state() { [[ -f "${NODE_DIR}/saved-$1" ]] || echo "$2" >"${NODE_DIR}/saved-$1"; }

# --- network and guards: before kube-apiserver, kube-proxy, kubelet or any pod --------
# host_node_exists: true while the host has a real node's bridge or guard chain.
host_node_exists() {
  ip link show "${NODE_BRIDGE}" >/dev/null 2>&1 || iptables -w -S "${GUARD_CHAIN}-IN" >/dev/null 2>&1
}

# stack_has_live_process <local-dir>: true when any process recorded in that stack's PID
# files still runs as that stack's (its command line names the directory).
stack_has_live_process() {
  local dir="$1" pidfile pid
  for pidfile in "${dir}"/pids/*.pid; do
    [[ -f "${pidfile}" ]] || continue
    pid="$(cat "${pidfile}")"
    alive "${pid}" && tr '\0' ' ' <"/proc/${pid}/cmdline" 2>/dev/null | grep -qF -- "${dir}/" && return 0
  done
  return 1
}

# reclaim_abandoned_node: when the real node on this host belongs to a stack none of whose
# processes run any more (its test or session was killed before its teardown), runs that
# stack's own teardown, keeping its logs. A live owner, or one unknown, is left alone.
reclaim_abandoned_node() {
  local owner
  owner="$(cat "${NODE_OWNER_FILE}" 2>/dev/null)" || return 1
  [[ -n "${owner}" && "${owner}" != "${LOCAL_DIR}" && -f "${owner}/node/owns-host-network" ]] || return 1
  stack_has_live_process "${owner}" && return 1
  log "the real node of ${owner} was abandoned (none of its processes runs); tearing it down with its local-down.sh, logs kept" >&2
  LOCAL_DIR="${owner}" NODE=real KEEP_STATE=1 "$(dirname "${BASH_SOURCE[0]}")/local-down.sh" >&2
}

node_network_up() {
  mkdir -p "${NODE_DIR}"
  # One real node per machine: the bridge, the guards and the fixed paths are shared.
  if host_node_exists && ! { reclaim_abandoned_node && ! host_node_exists; }; then
    local owner
    owner="$(cat "${NODE_OWNER_FILE}" 2>/dev/null || echo "unknown: ${NODE_OWNER_FILE} is missing")"
    log "another real node runs on this machine (bridge ${NODE_BRIDGE} or chain ${GUARD_CHAIN}-IN exists; its stack: ${owner}); stop it with LOCAL_DIR=<its stack> make down first" >&2
    return 1
  fi
  # Teardown removes kubelet's and kube-proxy's chains, which have fixed names: a machine
  # that already is a Kubernetes node must not be made into this one.
  local family
  for family in iptables ip6tables; do
    if "${family}-save" 2>/dev/null | grep -q '^:KUBE-'; then
      log "this machine already has KUBE-* ${family} chains (another kubelet or kube-proxy, or leftovers); NODE=real would remove them on teardown, so it does not start" >&2
      return 1
    fi
  done
  # From here on the host changes are this stack's, and its teardown undoes them.
  touch "${NODE_DIR}/owns-host-network"
  echo "${LOCAL_DIR}" >"${NODE_OWNER_FILE}"
  local dir
  for dir in "${NODE_FIXED_DIRS[@]}"; do
    if [[ -d "${dir}" ]]; then ls -A "${dir}" | sort >"${NODE_DIR}/before${dir//\//_}"; else echo "<absent>" >"${NODE_DIR}/before${dir//\//_}"; fi
  done
  save_state ip_forward "$(cat /proc/sys/net/ipv4/ip_forward)"
  save_state kubepods_cgroups "$(find /sys/fs/cgroup/ -maxdepth 2 -name 'kubepods*' | wc -l)"
  if [[ -f /proc/sys/net/bridge/bridge-nf-call-iptables ]]; then
    save_state bridge_nf_call_iptables "$(cat /proc/sys/net/bridge/bridge-nf-call-iptables)"
  fi

  # Guards first: nothing addressed to or coming from the node's private ranges may
  # leave through any interface but the bridge and loopback, and nothing outside may
  # reach the API port or the node's address.
  iptables -w -N "${GUARD_CHAIN}-OUT"
  iptables -w -A "${GUARD_CHAIN}-OUT" -o lo -j RETURN
  iptables -w -A "${GUARD_CHAIN}-OUT" -o "${NODE_BRIDGE}" -j RETURN
  iptables -w -N "${GUARD_CHAIN}-FWD"
  iptables -w -A "${GUARD_CHAIN}-FWD" -o "${NODE_BRIDGE}" -j RETURN
  iptables -w -A "${GUARD_CHAIN}-FWD" -s "${POD_CIDR}" -j DROP
  iptables -w -N "${GUARD_CHAIN}-IN"
  iptables -w -A "${GUARD_CHAIN}-IN" -i lo -j RETURN
  iptables -w -A "${GUARD_CHAIN}-IN" -i "${NODE_BRIDGE}" -j RETURN
  iptables -w -A "${GUARD_CHAIN}-IN" -p tcp --dport "${KUBE_APISERVER_PORT}" -j DROP
  local cidr
  for cidr in "${POD_CIDR}" "${SERVICE_CIDR}" "${FAKE_POD_CIDR}"; do
    iptables -w -A "${GUARD_CHAIN}-OUT" -d "${cidr}" -j DROP
    iptables -w -A "${GUARD_CHAIN}-FWD" -d "${cidr}" -j DROP
    iptables -w -A "${GUARD_CHAIN}-IN" -d "${cidr}" -j DROP
  done
  iptables -w -I OUTPUT 1 -j "${GUARD_CHAIN}-OUT"
  iptables -w -I FORWARD 1 -j "${GUARD_CHAIN}-FWD"
  iptables -w -I INPUT 1 -j "${GUARD_CHAIN}-IN"
  # kube-apiserver's 0.0.0.0 listener is dual-stack: close its port over IPv6 as well.
  ip6tables -w -N "${GUARD_CHAIN}-IN"
  ip6tables -w -A "${GUARD_CHAIN}-IN" -i lo -j RETURN
  ip6tables -w -A "${GUARD_CHAIN}-IN" -p tcp --dport "${KUBE_APISERVER_PORT}" -j DROP
  ip6tables -w -I INPUT 1 -j "${GUARD_CHAIN}-IN"

  ip link add "${NODE_BRIDGE}" type bridge
  ip addr add "${NODE_IP}/${POD_CIDR#*/}" dev "${NODE_BRIDGE}"
  ip link set "${NODE_BRIDGE}" up
  # Service addresses without a local endpoint rule go to the bridge, never to the
  # default gateway.
  ip route add "${SERVICE_CIDR}" dev "${NODE_BRIDGE}"
  echo 1 >/proc/sys/net/ipv4/ip_forward
  [[ -f /proc/sys/net/bridge/bridge-nf-call-iptables ]] && echo 1 >/proc/sys/net/bridge/bridge-nf-call-iptables
  log "node network: bridge ${NODE_BRIDGE} ${NODE_IP}, guards in ${GUARD_CHAIN}-{IN,OUT,FWD}"
}

# guards_first: kube-proxy and kubelet prepend their own jumps to INPUT, FORWARD and
# OUTPUT, and some of their chains accept packets; the guards go back in front, without
# a moment in which they are missing.
guards_first() {
  local hook chain numbers
  for hook in INPUT:IN FORWARD:FWD OUTPUT:OUT; do
    chain="${GUARD_CHAIN}-${hook#*:}"
    iptables -w -I "${hook%%:*}" 1 -j "${chain}"
    numbers="$(iptables -w -L "${hook%%:*}" --line-numbers -n | awk -v c="${chain}" '$2 == c {print $1}' | tail -n +2 | sort -rn)"
    for n in ${numbers}; do iptables -w -D "${hook%%:*}" "${n}"; done
  done
}

# --- the node itself: after kube-apiserver is ready --------------------------------
node_up() {
  mkdir -p "${NODE_DIR}"/{containerd/certs.d,cni/net.d,cni/ipam,kubelet,pki}
  new_cert ca "node-${NODE_NAME}" "/O=system:nodes/CN=system:node:${NODE_NAME}" clientAuth
  new_cert ca "node-${NODE_NAME}-serving" "/CN=${NODE_NAME}" serverAuth "DNS:${NODE_NAME},IP:${NODE_IP}"
  new_cert ca kube-proxy "/CN=system:kube-proxy" clientAuth
  new_cert ca coredns "/CN=system:coredns" clientAuth
  write_kubeconfig "${NODE_DIR}/kubelet.kubeconfig" "node-${NODE_NAME}"
  write_kubeconfig "${NODE_DIR}/kube-proxy.kubeconfig" kube-proxy
  write_kubeconfig "${NODE_DIR}/coredns.kubeconfig" coredns
  k apply -f "${ROOT}/artifacts/local/real-node/" >/dev/null

  cat >"${NODE_DIR}/containerd/config.toml" <<TOML
version = 2
root = "${NODE_DIR}/containerd/root"
state = "${NODE_DIR}/containerd/state"
[grpc]
  address = "${CONTAINERD_SOCK}"
[ttrpc]
  address = "${CONTAINERD_SOCK}.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${PAUSE_IMAGE}"
  # This VM withholds CAP_SYS_RESOURCE: runc must not try to lower oom_score_adj.
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${NODE_DIR}/cni/net.d"
  # A hosts.toml per registry, read at each pull: the real-node test trusts the CA of the
  # registry it runs on loopback there (nothing else is reachable).
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "${NODE_DIR}/containerd/certs.d"
TOML
  cat >"${NODE_DIR}/cni/net.d/10-nginx-operator.conflist" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "nginx-operator",
  "plugins": [
    {
      "type": "bridge", "bridge": "${NODE_BRIDGE}", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": {"type": "host-local", "dataDir": "${NODE_DIR}/cni/ipam",
               "ranges": [[{"subnet": "${POD_CIDR}", "gateway": "${NODE_IP}"}]],
               "routes": [{"dst": "0.0.0.0/0"}]}
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
JSON
  start containerd containerd --config "${NODE_DIR}/containerd/config.toml"
  wait_running containerd "containerd's socket" 60 ctr --address "${CONTAINERD_SOCK}" version
  "${ROOT}/hack/images/import.sh" --address "${CONTAINERD_SOCK}" "${NODE_IMAGE_ARCHIVES[@]}" >/dev/null
  # Nothing may be pulled here, so the images an NginxOperator runs by default are the
  # local builds under those names: the unprivileged nginx (v1alpha2.DefaultImage) and the
  # stock one that tests name to run root explicitly.
  ctr --address "${CONTAINERD_SOCK}" -n k8s.io images tag --force "${NGINX_UNPRIVILEGED_IMAGE}" docker.io/nginxinc/nginx-unprivileged:1.27.4 >/dev/null
  ctr --address "${CONTAINERD_SOCK}" -n k8s.io images tag --force "${NGINX_IMAGE}" docker.io/library/nginx:1.27.4 >/dev/null
  log "imported ${#NODE_IMAGE_ARCHIVES[@]} image archives into the node's containerd"

  # Pods resolve cluster names through CoreDNS on the node address; it knows no other
  # zone and forwards nothing, so no lookup leaves the machine.
  printf 'nameserver 127.0.0.1\n' >"${NODE_DIR}/resolv.conf"
  cat >"${NODE_DIR}/Corefile" <<COREFILE
cluster.local:53 in-addr.arpa:53 ip6.arpa:53 {
    bind ${NODE_IP}
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig ${NODE_DIR}/coredns.kubeconfig local
        pods insecure
    }
    cache 5
}
COREFILE
  start coredns "${COREDNS_BIN}" -conf "${NODE_DIR}/Corefile" -dns.port 53

  # syncFrequency: kubelet rewrites Secret and ConfigMap volumes when it syncs a pod, once a
  # minute by default; every 10s here, so that a renewed certificate reaches the pods that
  # mount it within seconds, not a minute (the tests renew certificates under load).
  cat >"${NODE_DIR}/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
syncFrequency: 10s
address: ${NODE_IP}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: ${KUBELET_HEALTHZ_PORT}
tlsCertFile: ${PKI_DIR}/node-${NODE_NAME}-serving.crt
tlsPrivateKeyFile: ${PKI_DIR}/node-${NODE_NAME}-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: ${PKI_DIR}/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://${CONTAINERD_SOCK}
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
oomScoreAdj: 0
resolvConf: ${NODE_DIR}/resolv.conf
clusterDNS: [${NODE_IP}]
clusterDomain: cluster.local
evictionHard: {memory.available: "1%", nodefs.available: "1%", nodefs.inodesFree: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
YAML
  start kubelet "${KUBE_BIN_DIR}/kubelet" --config "${NODE_DIR}/kubelet.yaml" \
    --kubeconfig "${NODE_DIR}/kubelet.kubeconfig" --root-dir "${NODE_DIR}/kubelet" \
    --node-ip "${NODE_IP}" --hostname-override "${NODE_NAME}"

  cat >"${NODE_DIR}/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: ${NODE_DIR}/kube-proxy.kubeconfig}
hostnameOverride: ${NODE_NAME}
mode: iptables
clusterCIDR: ${POD_CIDR}
bindAddress: ${NODE_IP}
healthzBindAddress: 127.0.0.1:${KUBE_PROXY_HEALTHZ_PORT}
metricsBindAddress: 127.0.0.1:${KUBE_PROXY_METRICS_PORT}
nodePortAddresses: [${NODE_IP}/32]
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
YAML
  echo "${KUBE_BIN_DIR}/kube-proxy" >"${NODE_DIR}/kube-proxy-bin" # for --cleanup on teardown
  start kube-proxy "${KUBE_BIN_DIR}/kube-proxy" --config "${NODE_DIR}/kube-proxy.yaml"
  wait_running kubelet "node ${NODE_NAME} Ready" 120 k wait --for=condition=Ready --timeout=5s "node/${NODE_NAME}"
  wait_running kube-proxy "kube-proxy's /healthz" 60 curl -fsS "http://127.0.0.1:${KUBE_PROXY_HEALTHZ_PORT}/healthz"
  # kube-proxy prepends its jumps in its first full sync, which can come after /healthz;
  # once they exist it only checks for them, so the guards moved in front after that stay.
  wait_running kube-proxy "kube-proxy's first sync of its iptables rules" 60 kube_proxy_synced
  guards_first
}

# kube_proxy_synced: true once kube-proxy's jumps from INPUT, FORWARD and OUTPUT exist.
kube_proxy_synced() {
  local hook
  for hook in INPUT FORWARD OUTPUT; do
    iptables -w -S "${hook}" | grep -q -- "-j KUBE-PROXY-FIREWALL" || return 1
  done
  iptables -w -S FORWARD | grep -q -- "-j KUBE-FORWARD"
}

# --- teardown: leaves nothing behind ------------------------------------------------
# node_drain: stops new pods from appearing and lets kubelet tear down every pod
# sandbox (network namespaces, CNI addresses) while it still runs.
node_drain() {
  [[ -d "${NODE_DIR}" ]] && running kubelet && running kube-apiserver || return 0
  local name
  for name in kube-controller-manager kube-scheduler; do stop_component "${name}"; done
  "${KUBECTL}" --kubeconfig "${KUBECONFIG_FILE}" delete pods --all -A --force --grace-period 0 --wait=false >/dev/null 2>&1 || true
  local deadline=$((SECONDS + 90)) task
  while ((SECONDS < deadline)); do
    [[ -z "$(ctr --address "${CONTAINERD_SOCK}" -n k8s.io tasks ls -q 2>/dev/null)" ]] && break
    sleep 1
  done
  # Containers outlive their shims: whatever kubelet did not stop is killed through
  # containerd while it still runs.
  for task in $(ctr --address "${CONTAINERD_SOCK}" -n k8s.io tasks ls -q 2>/dev/null); do
    log "killing container ${task}, which kubelet did not stop" >&2
    ctr --address "${CONTAINERD_SOCK}" -n k8s.io tasks kill -s SIGKILL "${task}" >/dev/null 2>&1 || true
  done
  deadline=$((SECONDS + 30))
  while ((SECONDS < deadline)) && [[ -n "$(ctr --address "${CONTAINERD_SOCK}" -n k8s.io tasks ls -q 2>/dev/null | xargs -r -n1 ctr --address "${CONTAINERD_SOCK}" -n k8s.io tasks ps -q 2>/dev/null)" ]]; do
    sleep 1
  done
  log "drained node ${NODE_NAME}"
}

# node_cleanup: after every component has stopped, removes what they left on the host.
node_cleanup() {
  [[ -f "${NODE_DIR}/owns-host-network" ]] || return 0
  require_root
  local pid
  # containerd's shims outlive it; they are ours when they serve our socket.
  for pid in $(pgrep -f -- "-address ${CONTAINERD_SOCK}" || true); do
    kill -KILL "${pid}" 2>/dev/null || true
  done
  local mnt
  while read -r mnt; do
    umount -l "${mnt}" 2>/dev/null || true
  done < <(findmnt -rn -o TARGET | grep -F -- "${NODE_DIR}/" | sort -r)
  local entry ns
  for entry in $(new_entries /run/netns); do
    if [[ "${entry}" == /run/netns ]]; then # absent before: every namespace in it is ours
      for ns in /run/netns/*; do [[ -e "${ns}" ]] && ip netns delete "${ns##*/}"; done
    else
      ip netns delete "${entry##*/}" 2>/dev/null || true
    fi
  done
  [[ -f "${NODE_DIR}/kube-proxy-bin" ]] && "$(cat "${NODE_DIR}/kube-proxy-bin")" --cleanup >/dev/null 2>&1
  local family table chain
  for family in iptables ip6tables; do
    for table in filter nat mangle; do
      for chain in "${KUBELET_CHAINS[@]}"; do
        "${family}" -w -t "${table}" -S 2>/dev/null | grep -E -- "-j ${chain}( |$)" | sed 's/^-A/-D/' | while read -r rule; do
          eval "${family} -w -t ${table} ${rule}" || true
        done
        "${family}" -w -t "${table}" -F "${chain}" 2>/dev/null && "${family}" -w -t "${table}" -X "${chain}" 2>/dev/null || true
      done
    done
  done
  ip6tables -w -D INPUT -j "${GUARD_CHAIN}-IN" 2>/dev/null || true
  ip6tables -w -F "${GUARD_CHAIN}-IN" 2>/dev/null && ip6tables -w -X "${GUARD_CHAIN}-IN" 2>/dev/null || true
  iptables -w -D OUTPUT -j "${GUARD_CHAIN}-OUT" 2>/dev/null || true
  iptables -w -D FORWARD -j "${GUARD_CHAIN}-FWD" 2>/dev/null || true
  iptables -w -D INPUT -j "${GUARD_CHAIN}-IN" 2>/dev/null || true
  for chain in OUT FWD IN; do
    iptables -w -F "${GUARD_CHAIN}-${chain}" 2>/dev/null && iptables -w -X "${GUARD_CHAIN}-${chain}" 2>/dev/null || true
  done
  ip route del "${SERVICE_CIDR}" dev "${NODE_BRIDGE}" 2>/dev/null || true
  ip link del "${NODE_BRIDGE}" 2>/dev/null || true
  [[ -f "${NODE_DIR}/saved-ip_forward" ]] && cat "${NODE_DIR}/saved-ip_forward" >/proc/sys/net/ipv4/ip_forward
  [[ -f "${NODE_DIR}/saved-bridge_nf_call_iptables" ]] && cat "${NODE_DIR}/saved-bridge_nf_call_iptables" >/proc/sys/net/bridge/bridge-nf-call-iptables
  local dir left=0
  for dir in "${NODE_FIXED_DIRS[@]}"; do
    for entry in $(new_entries "${dir}"); do
      # What is mounted below an entry this node created is this node's too.
      while read -r mnt; do
        umount -l "${mnt}" 2>/dev/null || true
      done < <(findmnt -rn -o TARGET | grep -F -- "${entry}/" | sort -r)
      if findmnt -rn -o TARGET | grep -qxF -- "${entry}"; then
        log "not removing ${entry}: it is still a mount point" >&2
        left=1
        continue
      fi
      rm -rf -- "${entry}" || left=1
    done
  done
  # kubelet's cgroups (one hierarchy per controller on cgroup v1), deepest first, unless
  # another kubelet had made them before.
  if [[ "$(cat "${NODE_DIR}/saved-kubepods_cgroups" 2>/dev/null)" == 0 ]]; then
    find /sys/fs/cgroup/*/kubepods* -depth -type d -exec rmdir {} + 2>/dev/null || true
  fi
  if findmnt -rn -o TARGET | grep -qF -- "${NODE_DIR}/"; then
    log "mounts under ${NODE_DIR} remain; not removing it" >&2
    return 1
  fi
  ((left == 0)) || return 1
  # Cleaned up: a later teardown of this directory must not touch the host again (by
  # then the names may belong to another stack).
  rm -f "${NODE_DIR}/owns-host-network"
  [[ "$(cat "${NODE_OWNER_FILE}" 2>/dev/null)" == "${LOCAL_DIR}" ]] && rm -f "${NODE_OWNER_FILE}"
  log "removed node ${NODE_NAME}: processes, mounts, network namespaces, iptables rules, bridge and route"
}
