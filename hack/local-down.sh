#!/usr/bin/env bash
# Stops exactly the processes local-up.sh started (by their recorded PIDs) and removes
# the local state directory.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib-local.sh"

if [[ ! -d "${LOCAL_DIR}" ]]; then
  log "nothing to stop: ${LOCAL_DIR} does not exist"
  exit 0
fi
for ((i = ${#COMPONENTS[@]} - 1; i >= 0; i--)); do
  name="${COMPONENTS[i]}"
  pidfile="${PID_DIR}/${name}.pid"
  [[ -f "${pidfile}" ]] || continue
  pid="$(cat "${pidfile}")"
  if kill -0 "${pid}" 2>/dev/null; then
    kill -TERM "${pid}" 2>/dev/null
    for _ in $(seq 1 40); do kill -0 "${pid}" 2>/dev/null || break; sleep 0.25; done
    kill -0 "${pid}" 2>/dev/null && kill -KILL "${pid}" 2>/dev/null
    log "stopped ${name} (pid ${pid})"
  fi
done
rm -rf "${LOCAL_DIR}"
log "removed ${LOCAL_DIR}"
