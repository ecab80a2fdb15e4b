#!/usr/bin/env bash
# Stops exactly the processes local-up.sh started (by their recorded PIDs) and removes
# the local state directory; with KEEP_STATE=1 the directory (logs included) stays.
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
  if ours "${pid}"; then
    kill -TERM "${pid}" 2>/dev/null
    for _ in $(seq 1 60); do alive "${pid}" || break; sleep 0.25; done
    alive "${pid}" && kill -KILL "${pid}" 2>/dev/null
    log "stopped ${name} (pid ${pid})"
  fi
done
if [[ "${KEEP_STATE:-0}" == 1 ]]; then
  log "kept ${LOCAL_DIR} (logs in ${LOG_DIR})"
  exit 0
fi
rm -rf "${LOCAL_DIR}"
log "removed ${LOCAL_DIR}"
