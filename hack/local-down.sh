#!/usr/bin/env bash
# Stops exactly the processes local-up.sh started (by their recorded PIDs), removes what a
# real node left on the host (NODE=real), and removes the local state directory; with
# KEEP_STATE=1 the directory (logs included) stays.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib-local.sh"

if [[ ! -d "${LOCAL_DIR}" ]]; then
  log "nothing to stop: ${LOCAL_DIR} does not exist"
  exit 0
fi
# A real node's teardown changes the host; check for root before touching anything.
[[ -f "${NODE_DIR}/owns-host-network" ]] && require_root
node_drain
for ((i = ${#COMPONENTS[@]} - 1; i >= 0; i--)); do
  stop_component "${COMPONENTS[i]}"
done
if ! node_cleanup; then
  log "kept ${LOCAL_DIR}: the node could not be cleaned up completely" >&2
  exit 1
fi
if [[ "${KEEP_STATE:-0}" == 1 ]]; then
  log "kept ${LOCAL_DIR} (logs in ${LOG_DIR})"
  exit 0
fi
rm -rf "${LOCAL_DIR}"
log "removed ${LOCAL_DIR}"
