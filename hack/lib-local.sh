# Shared settings of the local control plane scripts (sourced, not run).
# Every value can be overridden from the environment, which is how the e2e tests run
# a private stack on free ports in a temporary directory.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
LOCAL_DIR="${LOCAL_DIR:-${ROOT}/.local}"
PKI_DIR="${LOCAL_DIR}/pki"
LOG_DIR="${LOCAL_DIR}/logs"
PID_DIR="${LOCAL_DIR}/pids"
KUBECONFIG_FILE="${LOCAL_DIR}/kubeconfig"

# The components in start order and their ports (defaults unless set in the environment)
# come from hack/stack.txt; local-down stops them in reverse. Each starts only in the
# stack that uses it.
COMPONENTS=()
while read -r component _ ports; do
  [[ -z "${component}" || "${component}" == \#* ]] && continue
  COMPONENTS+=("${component}")
  for port in ${ports}; do
    name="${port%%=*}"
    printf -v "${name}" '%s' "${!name:-${port#*=}}"
  done
done <"${ROOT}/hack/stack.txt"
unset component ports port name
KUBECTL="${KUBECTL:-/usr/bin/kubectl}"
# kubelet's defaults: a node Lease of 40s, judged by kube-controller-manager after 50s.
NODE_LEASE_DURATION_SECONDS="${NODE_LEASE_DURATION_SECONDS:-40}"
NODE_MONITOR_GRACE_PERIOD="${NODE_MONITOR_GRACE_PERIOD:-50s}"

# START_CONTROLLER=false leaves our controller out of the kwok stack (a benchmark measures
# the API alone, then starts the controller itself); everything else still starts.
START_CONTROLLER="${START_CONTROLLER:-true}"
# OPERATOR_APISERVER_STORAGE=embedded (the default) keeps our apiserver's objects in its
# embedded etcd under LOCAL_DIR; =external puts them in the stack's etcd under their own
# prefix, as a production deployment with --etcd-servers does (the benchmark compares
# heap with kube-apiserver's, whose etcd is a separate process too).
OPERATOR_APISERVER_STORAGE="${OPERATOR_APISERVER_STORAGE:-embedded}"
# Extra flags, space-separated, appended to a component's command line, e.g.
# KUBE_APISERVER_EXTRA_FLAGS="--max-requests-inflight=800"
# OPERATOR_APISERVER_EXTRA_FLAGS="--feature-gates=CBORServingAndStorage=true".
KUBE_APISERVER_EXTRA_FLAGS="${KUBE_APISERVER_EXTRA_FLAGS:-}"
KUBE_CONTROLLER_MANAGER_EXTRA_FLAGS="${KUBE_CONTROLLER_MANAGER_EXTRA_FLAGS:-}"
KUBE_SCHEDULER_EXTRA_FLAGS="${KUBE_SCHEDULER_EXTRA_FLAGS:-}"
OPERATOR_APISERVER_EXTRA_FLAGS="${OPERATOR_APISERVER_EXTRA_FLAGS:-}"
CONTROLLER_EXTRA_FLAGS="${CONTROLLER_EXTRA_FLAGS:-}"

# NODE=real adds this machine as a real node (kubelet, containerd, kube-proxy; needs
# root) instead of kwok's fake nodes; see hack/lib-node.sh.
NODE="${NODE:-}"

# extra_flags <variable name>: prints the variable's space-separated flags one a line,
# for mapfile.
extra_flags() {
  local flags
  read -r -a flags <<<"${!1}"
  ((${#flags[@]} == 0)) || printf '%s\n' "${flags[@]}"
}

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*"; }

# alive <pid>: true while the process runs. Zombies count as gone: our components are
# reparented when the starting shell exits, and PID 1 in a container may never reap them.
alive() {
  local state
  state="$(sed -n 's/^[0-9]* (.*) \([A-Z]\) .*/\1/p' "/proc/$1/stat" 2>/dev/null)" || return 1
  [[ -n "${state}" && "${state}" != Z ]]
}

# ours <pid>: true when the process runs and is one of this stack's components: every
# component's command line names ${LOCAL_DIR}. A stale PID file (after a reboot, say)
# then never makes us signal an unrelated process that reuses the PID.
ours() {
  alive "$1" && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "${LOCAL_DIR}/"
}

# running <name>: true when the component's recorded process is alive.
running() {
  local pidfile="${PID_DIR}/$1.pid"
  [[ -f "${pidfile}" ]] && ours "$(cat "${pidfile}")"
}

# stop_component <name>: stops the component's recorded process, if it is ours: TERM,
# then KILL after 15 seconds.
stop_component() {
  local pidfile="${PID_DIR}/$1.pid" pid
  [[ -f "${pidfile}" ]] || return 0
  pid="$(cat "${pidfile}")"
  ours "${pid}" || return 0
  kill -TERM "${pid}" 2>/dev/null
  for _ in $(seq 1 60); do alive "${pid}" || break; sleep 0.25; done
  alive "${pid}" && kill -KILL "${pid}" 2>/dev/null
  log "stopped $1 (pid ${pid})"
}

# first_running: prints the first component that is up, fails when none is.
first_running() {
  local name
  for name in "${COMPONENTS[@]}"; do
    if running "${name}"; then
      echo "${name}"
      return 0
    fi
  done
  return 1
}

# wait_for <what> <seconds> <command...>: retries the command until it succeeds.
wait_for() {
  local what="$1" timeout="$2"; shift 2
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      log "timed out after ${timeout}s waiting for ${what}; logs in ${LOG_DIR}" >&2
      return 1
    fi
    sleep 0.5
  done
}

# wait_running <component> <what> <seconds> <command...>: like wait_for, but gives up as
# soon as the component's process has exited (a port taken by someone else, a bad flag),
# instead of waiting out the timeout.
wait_running() {
  local name="$1" what="$2" timeout="$3"; shift 3
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    # A process that has just started can read for a moment as not ours (CI saw
    # kube-apiserver "exit" with an empty log, then stopped it running): look again
    # before giving up on it.
    if ! running "${name}" && ! { sleep 1 && running "${name}"; }; then
      log "${name} exited while waiting for ${what}; see ${LOG_DIR}/${name}.log:" >&2
      tail -n 5 "${LOG_DIR}/${name}.log" >&2
      return 1
    fi
    if ((SECONDS >= deadline)); then
      log "timed out after ${timeout}s waiting for ${what}; logs in ${LOG_DIR}" >&2
      return 1
    fi
    sleep 0.5
  done
}

source "$(dirname "${BASH_SOURCE[0]}")/lib-node.sh"
